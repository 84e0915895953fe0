#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sgd.hpp"

namespace commsgd::kernels::cuda {

// kernels/vector_ops.hpp, kernels/sgd.hpp and kernels/half_precision.hpp on the device: dense
// buffers are device pointers, every call is enqueued on `stream` and, but for squared_norm,
// the host does not wait. Products and sums are rounded one at a time (no fused multiply-add),
// so each entry gets the bits the host's loop gives it.

// acc += g over n entries.
void add(float* acc, const float* g, std::size_t n, cudaStream_t stream);

// x *= factor.
void scale(float* x, std::size_t n, float factor, cudaStream_t stream);

// x −= y over n entries.
void subtract(float* x, const float* y, std::size_t n, cudaStream_t stream);

// Σ x², in double. Synchronizes the stream to return it: the one scalar the trainer needs on the
// host each step (the gradient's norm). Summed in another order than the host's loop, so its
// last bits may differ.
double squared_norm(const float* x, std::size_t n, cudaStream_t stream);

// x = (x + Σ_b blocks[b·n .. b·n + n))·share over n entries, the blocks added in order.
void add_blocks(float* x, const float* blocks, std::size_t n, std::size_t block_count, float share,
                cudaStream_t stream);

// x += a − b over n entries, the difference rounded first.
void add_difference(float* x, const float* a, const float* b, std::size_t n, cudaStream_t stream);

// Σ (a − b)² in double; synchronizes the stream to return it.
double squared_distance(const float* a, const float* b, std::size_t n, cudaStream_t stream);

// The host's sgd_step over n entries, with its arithmetic.
void sgd_step(float* params, const float* grads, float* momentum_buffer, std::size_t n,
              const SgdHyperParams& hp, cudaStream_t stream);

// To and from IEEE binary16 or bfloat16 bits, rounding to nearest, ties to even.
void to_half(const float* x, std::uint16_t* out, std::size_t n, bool bf16, cudaStream_t stream);
void from_half(const std::uint16_t* h, float* out, std::size_t n, bool bf16, cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
