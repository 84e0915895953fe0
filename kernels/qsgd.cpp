#include "kernels/qsgd.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>

#include "kernels/qsgd_blocks.hpp"
#include "kernels/simd_path.hpp"

namespace commsgd::kernels {
namespace {

namespace blocks = detail::qsgd;

// SplitMix64's finalizer: a well-mixed 64-bit value for every input (the keys).
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void check_levels(unsigned levels) {
  if (levels == 0 || levels > std::numeric_limits<std::int32_t>::max() / 2) {
    throw std::invalid_argument("qsgd: levels must be >= 1 and < 2^30");
  }
}

void check(std::size_t entries, unsigned levels, std::size_t words) {
  check_levels(levels);
  if (words != qsgd_words(entries, levels)) {
    throw std::invalid_argument("qsgd: the code is not qsgd_words(entries, levels) words");
  }
}

// Bucket b of a whole vector: its entries and its words.
struct Bucket {
  std::size_t first, entries, first_word, words;
};

Bucket bucket_at(std::size_t b, std::size_t n, std::size_t bucket, unsigned levels) {
  const std::size_t first = b * bucket, entries = std::min(bucket, n - first);
  return {first, entries, b * qsgd_words(bucket, levels), qsgd_words(entries, levels)};
}

// Each bucket is read twice, its norm and then its codes, the second time from the cache; while
// the codes are computed nothing else asks memory for what comes next, so the encoder asks for
// the bucket kPrefetchBuckets on, a cache line with each field of 16 entries, spread among the
// work. (All of the next bucket's lines asked for at once, before, stalled on the requests that
// were in flight: a tenth of the encoding's time, measured.)
constexpr std::size_t kPrefetchBuckets = 2;

// Encodes v in buckets of `bucket` entries, entries first.. of the whole vector, in registers of
// kRegisterLanes 32-bit lanes; the caller has checked the sizes. Inline, so that it is built for
// each instruction set below.
template <std::size_t kRegisterLanes>
[[gnu::always_inline]] inline void encode_range(std::span<const float> v, std::size_t bucket,
                                                unsigned levels, std::uint64_t key,
                                                std::size_t first, std::span<std::uint64_t> code,
                                                std::span<float> norms) {
  for (std::size_t b = 0; b < norms.size(); ++b) {
    const Bucket at = bucket_at(b, v.size(), bucket, levels);
    // In the vector, or the bucket's own entries again where the end is near.
    const std::size_t ahead =
        at.first + (kPrefetchBuckets + 1) * bucket <= v.size() ? kPrefetchBuckets * bucket : 0;
    norms[b] = blocks::encode_bucket<kRegisterLanes>(v.subspan(at.first, at.entries), levels, key,
                                                     static_cast<std::uint32_t>(first + at.first),
                                                     ahead, code.subspan(at.first_word, at.words));
  }
}

// out += scale · the decoded code, bucket by bucket; the caller has checked the sizes.
[[gnu::always_inline]] inline void decode_add_range(std::span<const std::uint64_t> code,
                                                    std::span<const float> norms,
                                                    std::size_t bucket, unsigned levels,
                                                    float scale, std::span<float> out) {
  for (std::size_t b = 0; b < norms.size(); ++b) {
    const Bucket at = bucket_at(b, out.size(), bucket, levels);
    blocks::decode_add_bucket(code.subspan(at.first_word, at.words), levels, norms[b], scale,
                              out.subspan(at.first, at.entries));
  }
}

// The encoder and decoder for each instruction set, the same operations in each: on x86-64's
// AVX-512 and AVX2 sixteen or eight lanes to an instruction (the encoder's registers: 16, 8, and
// 4 for the portable version, SSE2's and NEON's), and no fused multiply-add in any (this file is
// built with -ffp-contract=off), so the same codes and sums. Functions with target attributes
// rather than GCC's target_clones, so that a test and a benchmark can take each one on one CPU.
using Encoder = void (*)(std::span<const float>, std::size_t, unsigned, std::uint64_t, std::size_t,
                         std::span<std::uint64_t>, std::span<float>);
using Decoder = void (*)(std::span<const std::uint64_t>, std::span<const float>, std::size_t,
                         unsigned, float, std::span<float>);
struct Version {
  Encoder encode;
  Decoder decode;
};

void encode_portable(std::span<const float> v, std::size_t bucket, unsigned levels,
                     std::uint64_t key, std::size_t first, std::span<std::uint64_t> code,
                     std::span<float> norms) {
  encode_range<4>(v, bucket, levels, key, first, code, norms);
}

void decode_add_portable(std::span<const std::uint64_t> code, std::span<const float> norms,
                         std::size_t bucket, unsigned levels, float scale, std::span<float> out) {
  decode_add_range(code, norms, bucket, levels, scale, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2")]] void encode_avx2(std::span<const float> v, std::size_t bucket,
                                         unsigned levels, std::uint64_t key, std::size_t first,
                                         std::span<std::uint64_t> code, std::span<float> norms) {
  encode_range<8>(v, bucket, levels, key, first, code, norms);
}

[[gnu::target("avx2")]] void decode_add_avx2(std::span<const std::uint64_t> code,
                                             std::span<const float> norms, std::size_t bucket,
                                             unsigned levels, float scale, std::span<float> out) {
  decode_add_range(code, norms, bucket, levels, scale, out);
}

[[gnu::target("avx512f")]] void encode_avx512(std::span<const float> v, std::size_t bucket,
                                              unsigned levels, std::uint64_t key, std::size_t first,
                                              std::span<std::uint64_t> code,
                                              std::span<float> norms) {
  encode_range<16>(v, bucket, levels, key, first, code, norms);
}

[[gnu::target("avx512f")]] void decode_add_avx512(std::span<const std::uint64_t> code,
                                                  std::span<const float> norms, std::size_t bucket,
                                                  unsigned levels, float scale,
                                                  std::span<float> out) {
  decode_add_range(code, norms, bucket, levels, scale, out);
}
#endif

Version version_for(SimdPath path) {
  switch (path) {
#if defined(__x86_64__) && defined(__GNUC__)
    case SimdPath::avx512:
      return {encode_avx512, decode_add_avx512};
    case SimdPath::avx2:
      return {encode_avx2, decode_add_avx2};
#endif
    default:
      return {encode_portable, decode_add_portable};
  }
}

// Decided once, at the first encoding or decoding, unless a test or benchmark switches it.
std::atomic<SimdPath>& current_path() {
  static std::atomic<SimdPath> path{widest_simd_path(Avx512Subset::f)};
  return path;
}

Version current_version() {
  return version_for(current_path().load(std::memory_order_relaxed));
}

}  // namespace

std::uint64_t qsgd_key(std::uint64_t seed, std::uint64_t stream) {
  return mix(mix(seed) ^ (stream + 0x632be59bd9b4e019ULL));
}

std::vector<SimdPath> qsgd_simd_paths() {
  return simd_paths_up_to(widest_simd_path(Avx512Subset::f));
}

SimdPath qsgd_simd_path() {
  return current_path().load(std::memory_order_relaxed);
}

void use_qsgd_simd_path(SimdPath path) {
  check_simd_path_available(path, widest_simd_path(Avx512Subset::f), "use_qsgd_simd_path");
  current_path().store(path, std::memory_order_relaxed);
}

float qsgd_encode(std::span<const float> v, unsigned levels, std::uint64_t key, std::size_t first,
                  std::span<std::uint64_t> code) {
  check(v.size(), levels, code.size());
  if (v.empty()) return 0;
  float norm = 0;
  current_version().encode(v, v.size(), levels, key, first, code, std::span(&norm, 1));
  return norm;
}

void qsgd_decode_add(std::span<const std::uint64_t> code, unsigned levels, float norm, float scale,
                     std::span<float> out) {
  check(out.size(), levels, code.size());
  if (out.empty()) return;
  current_version().decode(code, std::span(&norm, 1), out.size(), levels, scale, out);
}

std::size_t qsgd_code_words(std::size_t n, std::size_t bucket, unsigned levels) {
  if (bucket == 0) throw std::invalid_argument("qsgd: the bucket must have entries");
  check_levels(levels);
  if (n == 0) return 0;
  const std::size_t buckets = (n + bucket - 1) / bucket;
  return (buckets - 1) * qsgd_words(bucket, levels) +
         qsgd_words(n - (buckets - 1) * bucket, levels);
}

void check_qsgd_sizes(std::size_t n, std::size_t bucket, unsigned levels, std::size_t words,
                      std::size_t norms) {
  if (words != qsgd_code_words(n, bucket, levels)) {
    throw std::invalid_argument("qsgd: the code is not qsgd_code_words(n, bucket, levels) words");
  }
  if (norms != (n + bucket - 1) / bucket)
    throw std::invalid_argument("qsgd: not one norm a bucket");
}

void qsgd_encode_buckets(std::span<const float> v, std::size_t bucket, unsigned levels,
                         std::uint64_t key, std::span<std::uint64_t> code, std::span<float> norms) {
  check_qsgd_sizes(v.size(), bucket, levels, code.size(), norms.size());
  current_version().encode(v, bucket, levels, key, 0, code, norms);
}

void qsgd_decode_add_buckets(std::span<const std::uint64_t> code, std::span<const float> norms,
                             std::size_t bucket, unsigned levels, float scale,
                             std::span<float> out) {
  check_qsgd_sizes(out.size(), bucket, levels, code.size(), norms.size());
  current_version().decode(code, norms, bucket, levels, scale, out);
}

}  // namespace commsgd::kernels
