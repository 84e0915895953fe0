#include <cmath>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/qsgd.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/thread_layout.cuh"
#include "kernels/qsgd.hpp"
#include "kernels/qsgd_draw.hpp"

namespace commsgd::kernels::cuda {
namespace {

constexpr int kThreads = detail::kStreamThreads;

// The layout of kernels/qsgd.hpp, for a kernel: bucket b's entries and words.
struct Layout {
  std::size_t n, bucket, full_words, codes_per_word;
  unsigned bits, levels;
  __device__ std::size_t entries(std::size_t b) const { return min(bucket, n - b * bucket); }
  __device__ std::size_t words(std::size_t b) const {
    return (entries(b) + codes_per_word - 1) / codes_per_word;
  }
};

// One warp a bucket, in the host's order (kernels/qsgd_blocks.hpp): lane l sums v_l², v_{l+32}²,
// .. in turn, with no fused multiply-add, the lanes are added in warp_sum's tree, and the square
// root is rounded as the host's.
__global__ void norms_kernel(const float* v, Layout layout, std::size_t buckets, float* norms) {
  const std::size_t warps = grid_stride() / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  for (std::size_t b = first_thread() / kWarp; b < buckets; b += warps) {
    const float* in = v + b * layout.bucket;
    const std::size_t entries = layout.entries(b);
    float sum = 0;
    for (std::size_t j = lane; j < entries; j += kWarp)
      sum = __fadd_rn(sum, __fmul_rn(in[j], in[j]));
    sum = warp_sum(sum);
    if (lane == 0) norms[b] = __fsqrt_rn(sum);
  }
}

// One thread a word: word w of bucket b holds entries w, w + W, w + 2W, .. of the bucket (W its
// words), each at the next field, and draws for them from its stream in turn; neighbouring threads
// read neighbouring entries.
__global__ void encode_kernel(const float* v, Layout layout, std::size_t total_words,
                              std::uint64_t key, const float* norms, std::uint64_t* code) {
  for (std::size_t at = first_thread(); at < total_words; at += grid_stride()) {
    const std::size_t b = at / layout.full_words, w = at - b * layout.full_words;
    const std::size_t first = b * layout.bucket, entries = layout.entries(b),
                      words = layout.words(b);
    const float norm = norms[b];
    std::uint64_t word = 0;
    if (norm != 0.0f) {
      const float to_levels = __fdiv_rn(static_cast<float>(layout.levels), norm);
      const auto top = static_cast<std::int32_t>(layout.levels);
      std::uint32_t state = qsgd_draw::start(key, static_cast<std::uint32_t>(first + w));
      unsigned shift = 0;
      for (std::size_t j = w; j < entries; j += words, shift += layout.bits) {
        const float x = v[first + j];
        const float a = __fmul_rn(fabsf(x), to_levels);
        const auto floor = static_cast<std::int32_t>(a);
        const float fraction = __fsub_rn(a, static_cast<float>(floor));
        const bool up = qsgd_draw::uniform(state) < fraction;
        state = qsgd_draw::next(state);
        const std::int32_t level = min(floor + static_cast<std::int32_t>(up), top);
        const std::uint32_t sign = __float_as_uint(x) >> 31;
        word |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(level) << 1 | sign) << shift;
      }
    }
    code[at] = word;
  }
}

__global__ void decode_add_kernel(const std::uint64_t* code, const float* norms, Layout layout,
                                  float scale, float* out) {
  const std::uint64_t mask = (std::uint64_t{1} << layout.bits) - 1;
  for (std::size_t i = first_thread(); i < layout.n; i += grid_stride()) {
    const std::size_t b = i / layout.bucket, j = i - b * layout.bucket, words = layout.words(b);
    const std::uint64_t word = code[b * layout.full_words + j % words];
    const auto field = static_cast<std::uint32_t>((word >> (layout.bits * (j / words))) & mask);
    const float step = __fdiv_rn(__fmul_rn(scale, norms[b]), static_cast<float>(layout.levels));
    const float magnitude =
        __fmul_rn(static_cast<float>(static_cast<std::int32_t>(field >> 1)), step);
    out[i] = __fadd_rn(out[i], __uint_as_float(__float_as_uint(magnitude) ^ (field << 31)));
  }
}

Layout layout_of(std::size_t n, std::size_t bucket, unsigned levels) {
  return {n,
          bucket,
          qsgd_words(bucket, levels),
          qsgd_codes_per_word(levels),
          qsgd_code_bits(levels),
          levels};
}

}  // namespace

void qsgd_encode_buckets(const float* v, std::size_t n, std::size_t bucket, unsigned levels,
                         std::uint64_t key, std::uint64_t* code, float* norms,
                         cudaStream_t stream) {
  const std::size_t words = qsgd_code_words(n, bucket, levels);  // checks bucket and levels
  if (n == 0) return;
  const Layout layout = layout_of(n, bucket, levels);
  const std::size_t buckets = (n + bucket - 1) / bucket;
  norms_kernel<<<detail::stream_grid(buckets * kWarp), kThreads, 0, stream>>>(v, layout, buckets,
                                                                              norms);
  check_launch("cuda qsgd norms");
  encode_kernel<<<detail::stream_grid(words), kThreads, 0, stream>>>(v, layout, words, key, norms,
                                                                     code);
  check_launch("cuda qsgd_encode_buckets");
}

void qsgd_decode_add_buckets(const std::uint64_t* code, const float* norms, std::size_t n,
                             std::size_t bucket, unsigned levels, float scale, float* out,
                             cudaStream_t stream) {
  qsgd_code_words(n, bucket, levels);  // checks bucket and levels
  if (n == 0) return;
  decode_add_kernel<<<detail::stream_grid(n), kThreads, 0, stream>>>(
      code, norms, layout_of(n, bucket, levels), scale, out);
  check_launch("cuda qsgd_decode_add_buckets");
}

}  // namespace commsgd::kernels::cuda
