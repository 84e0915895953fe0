#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/low_rank.hpp"

namespace commsgd::kernels::cuda {

// kernels/low_rank.hpp's products on the device, the factors laid out by columns as there.
// Sums run in another order than the host's loops, so results agree to rounding, not to the
// bit. Pointers are device pointers; every call is enqueued on `stream` with no host wait.

// p = M·q.
void multiply(const float* m, MatrixShape shape, const float* q, float* p, cudaStream_t stream);

// q = Mᵀ·p.
void multiply_transposed(const float* m, MatrixShape shape, const float* p, float* q,
                         cudaStream_t stream);

// M = p·qᵀ.
void outer_product(const float* p, const float* q, MatrixShape shape, float* m,
                   cudaStream_t stream);

// Modified Gram–Schmidt over the `rank` columns of `length` entries, in order, as the host's
// (a column of norm 0 left at 0): one block, the columns few and short (a matrix's rows).
void orthonormalize_columns(float* columns, std::size_t length, std::size_t rank,
                            cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
