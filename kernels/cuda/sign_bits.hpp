#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace commsgd::kernels::cuda {

// kernels/sign_bits.hpp on the device: the same packed signs (bit i % 64 of word i / 64, set
// where the entry is negative; +0, −0 and NaN positive) and the same arithmetic, entry by entry,
// so every result has the host's bits. Pointers are device pointers; every call is enqueued on
// `stream` and, but for l1_norm, the host does not wait.

// Packs the signs of v's n entries into sign_words(n) words (the unused bits of the last one 0).
void pack_signs(const float* v, std::size_t n, std::uint64_t* bits, cudaStream_t stream);

// out[j] += ±scale, the sign of entry first + j of `bits`, for j < n.
void add_signs(const std::uint64_t* bits, std::size_t first, float scale, float* out, std::size_t n,
               cudaStream_t stream);

// x[i] = sign(x[i]): −1, 0 or 1.
void sign_in_place(float* x, std::size_t n, cudaStream_t stream);

// Σ |x_i| in double. Synchronizes the stream to return it; summed in another order than the
// host's loop, so its last bits may differ.
double l1_norm(const float* x, std::size_t n, cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
