#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace commsgd::kernels::cuda {

// kernels/qsgd.hpp's whole-vector encoding and decoding on the device: the same buckets, draws
// and code layout, entry by entry with the host's arithmetic, so a bucket whose norm comes out
// the same (summed in another order, in double, then rounded to a float: the same but for a norm
// that close to a float's rounding boundary) gets the same code and decodes to the same bits.
// Pointers are device pointers; every call is enqueued on `stream` with no host wait.

// qsgd_encode_buckets: the code (qsgd_code_words(n, bucket, levels) words) and the norms (one a
// bucket) of v's n entries.
void qsgd_encode_buckets(const float* v, std::size_t n, std::size_t bucket, unsigned levels,
                         std::uint64_t key, std::uint64_t* code, float* norms, cudaStream_t stream);

// qsgd_decode_add_buckets: out[i] += scale · (entry i decoded), for i < n.
void qsgd_decode_add_buckets(const std::uint64_t* code, const float* norms, std::size_t n,
                             std::size_t bucket, unsigned levels, float scale, float* out,
                             cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
