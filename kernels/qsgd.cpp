#include "kernels/qsgd.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/qsgd_draw.hpp"
#include "kernels/simd_path.hpp"

namespace commsgd::kernels {
namespace {

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

// Σ v_i² in double, eight running sums so that no addition waits for the one before it. Inline,
// so that it is built for each of qsgd_encode's instruction sets.
[[gnu::always_inline]] inline double squared_norm(std::span<const float> v) {
  constexpr std::size_t kLanes = 8;
  double lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= v.size(); i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      lanes[l] += static_cast<double>(v[i + l]) * static_cast<double>(v[i + l]);
    }
  }
  double sum = 0;
  for (; i < v.size(); ++i) sum += static_cast<double>(v[i]) * static_cast<double>(v[i]);
  for (const double lane : lanes) sum += lane;
  return sum;
}

}  // namespace

std::uint64_t qsgd_key(std::uint64_t seed, std::uint64_t stream) {
  return mix(mix(seed) ^ (stream + 0x632be59bd9b4e019ULL));
}

// The encoder.
namespace {

// Entry x's code, its level << 1 | its sign (set where negative), i its index in the whole
// vector. The level is ⌊a⌋ or ⌊a⌋ + 1 for a = s·|x|/‖v‖, the larger with probability a − ⌊a⌋.
[[gnu::always_inline]] inline std::uint32_t code_of(float x, std::uint32_t i, std::uint64_t key,
                                                    float to_levels, std::int32_t top) {
  const float a = std::fabs(x) * to_levels;         // in [0, s], up to rounding
  const auto floor = static_cast<std::int32_t>(a);  // a >= 0: truncation is the floor
  const bool up = qsgd_draw::uniform(key, i) < a - static_cast<float>(floor);
  // At most s: |v_i| = ‖v‖ can round to a hair above s, and s + 1 would not fit the field.
  const std::int32_t level = std::min(floor + static_cast<std::int32_t>(up), top);
  return static_cast<std::uint32_t>(level) << 1 | std::bit_cast<std::uint32_t>(x) >> 31;
}

// Words are built kBlock at a time, each in two 32-bit halves (low and high bits): the loops
// over a block have a fixed count and stay in 32-bit lanes, so that they vectorize whole, sixteen
// or eight lanes to an instruction, with the halves in registers. A field across bit 32 goes into
// both halves.
constexpr std::size_t kBlock = 16;

// The codes c of one field, at bits [shift, shift + bits) of the block's words, ORed in.
[[gnu::always_inline]] inline void or_field(const std::uint32_t (&c)[kBlock], std::size_t shift,
                                            unsigned bits, std::uint32_t (&low)[kBlock],
                                            std::uint32_t (&high)[kBlock]) {
  if (shift + bits <= 32) {
    for (std::size_t l = 0; l < kBlock; ++l) low[l] |= c[l] << shift;
  } else if (shift >= 32) {
    for (std::size_t l = 0; l < kBlock; ++l) high[l] |= c[l] << (shift - 32);
  } else {
    for (std::size_t l = 0; l < kBlock; ++l) {
      low[l] |= c[l] << shift;
      high[l] |= c[l] >> (32 - shift);
    }
  }
}

// Encodes one bucket (v, entries first.. of the whole vector; the caller has checked the sizes)
// and returns its norm. Inline, so that it is built for each instruction set of its callers.
// Entry j goes to word j mod W, field ⌊j/W⌋ (W = code.size(), kernels/qsgd.hpp).
[[gnu::always_inline]] inline float encode_bucket(std::span<const float> v, unsigned levels,
                                                  std::uint64_t key, std::size_t first,
                                                  std::span<std::uint64_t> code) {
  const auto norm = static_cast<float>(std::sqrt(squared_norm(v)));
  if (norm == 0) {
    std::fill(code.begin(), code.end(), 0);
    return 0;
  }
  const unsigned bits = qsgd_code_bits(levels);
  const std::size_t n = v.size(), words = code.size();
  const float to_levels = static_cast<float>(levels) / norm;
  const auto top = static_cast<std::int32_t>(levels);
  // Entry indices in 32 bits, as the draws take them: a 64-bit counter costs the loop shuffles.
  const auto index = [first](std::size_t j) { return static_cast<std::uint32_t>(first + j); };
  const std::size_t whole_fields = n / words;  // the fields every word has
  std::size_t w0 = 0;
  for (; w0 + kBlock <= words; w0 += kBlock) {
    std::uint32_t low[kBlock] = {}, high[kBlock] = {};
    std::size_t shift = 0;
    for (std::size_t begin = w0; begin < whole_fields * words; begin += words, shift += bits) {
      const float* in = v.data() + begin;
      const std::uint32_t i = index(begin);
      std::uint32_t c[kBlock];
      for (std::uint32_t l = 0; l < kBlock; ++l) c[l] = code_of(in[l], i + l, key, to_levels, top);
      or_field(c, shift, bits, low, high);
    }
    // The last field, which only the first n mod W words have: zero, the code of 0, for the
    // others.
    if (whole_fields * words + w0 < n) {
      const std::size_t begin = whole_fields * words + w0;
      const std::uint32_t i = index(begin);
      std::uint32_t c[kBlock];
      for (std::uint32_t l = 0; l < kBlock; ++l) {
        const float x = begin + l < n ? v[begin + l] : 0.0f;
        c[l] = code_of(x, i + l, key, to_levels, top);
      }
      or_field(c, shift, bits, low, high);
    }
    for (std::size_t l = 0; l < kBlock; ++l) {
      code[w0 + l] = static_cast<std::uint64_t>(high[l]) << 32 | low[l];
    }
  }
  for (; w0 < words; ++w0) {  // the words after the last whole block, one at a time
    std::uint64_t word = 0;
    for (std::size_t j = w0, shift = 0; j < n; j += words, shift += bits) {
      word |= std::uint64_t{code_of(v[j], index(j), key, to_levels, top)} << shift;
    }
    code[w0] = word;
  }
  return norm;
}

// Each bucket is read twice, its norm and then its codes, the second time from the cache; while
// the codes are computed nothing else asks memory for the next bucket, so the encoder asks for it
// ahead (its first kPrefetchEntries entries), and the next norm finds it on its way.
constexpr std::size_t kPrefetchEntries = 512;

// Encodes v in buckets of `bucket` entries, entries first.. of the whole vector (the caller has
// checked the sizes). Inline, so that it is built for each instruction set below.
[[gnu::always_inline]] inline void encode_range(std::span<const float> v, std::size_t bucket,
                                                unsigned levels, std::uint64_t key,
                                                std::size_t first, std::span<std::uint64_t> code,
                                                std::span<float> norms) {
  for (std::size_t b = 0; b < norms.size(); ++b) {
    const Bucket at = bucket_at(b, v.size(), bucket, levels);
    const std::size_t ahead = std::min(v.size(), at.first + at.entries + kPrefetchEntries);
    for (std::size_t j = at.first + at.entries; j < ahead; j += 16) __builtin_prefetch(&v[j]);
    norms[b] = encode_bucket(v.subspan(at.first, at.entries), levels, key, first + at.first,
                             code.subspan(at.first_word, at.words));
  }
}

// The encoder for each instruction set, the same operations in each: 32-bit multiplies sixteen
// or eight at a time on x86-64's AVX-512 and AVX2, the hash's cost, and no fused multiply-add in
// any (this file is built with -ffp-contract=off), so the same codes. Functions with target
// attributes rather than GCC's target_clones, so that a test and a benchmark can take each one on
// one CPU.
using Encoder = void (*)(std::span<const float>, std::size_t, unsigned, std::uint64_t, std::size_t,
                         std::span<std::uint64_t>, std::span<float>);

void encode_portable(std::span<const float> v, std::size_t bucket, unsigned levels,
                     std::uint64_t key, std::size_t first, std::span<std::uint64_t> code,
                     std::span<float> norms) {
  encode_range(v, bucket, levels, key, first, code, norms);
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2")]] void encode_avx2(std::span<const float> v, std::size_t bucket,
                                         unsigned levels, std::uint64_t key, std::size_t first,
                                         std::span<std::uint64_t> code, std::span<float> norms) {
  encode_range(v, bucket, levels, key, first, code, norms);
}

[[gnu::target("avx512f")]] void encode_avx512(std::span<const float> v, std::size_t bucket,
                                              unsigned levels, std::uint64_t key, std::size_t first,
                                              std::span<std::uint64_t> code,
                                              std::span<float> norms) {
  encode_range(v, bucket, levels, key, first, code, norms);
}
#endif

Encoder encoder_for(SimdPath path) {
  switch (path) {
#if defined(__x86_64__) && defined(__GNUC__)
    case SimdPath::avx512:
      return encode_avx512;
    case SimdPath::avx2:
      return encode_avx2;
#endif
    default:
      return encode_portable;
  }
}

// Decided once, at the first encoding, unless a test or benchmark switches it.
std::atomic<SimdPath>& current_path() {
  static std::atomic<SimdPath> path{widest_simd_path(Avx512Subset::f)};
  return path;
}

void encode(std::span<const float> v, std::size_t bucket, unsigned levels, std::uint64_t key,
            std::size_t first, std::span<std::uint64_t> code, std::span<float> norms) {
  encoder_for(current_path().load(std::memory_order_relaxed))(v, bucket, levels, key, first, code,
                                                              norms);
}

}  // namespace

SimdPath qsgd_encode_path() {
  return current_path().load(std::memory_order_relaxed);
}

std::vector<SimdPath> qsgd_encode_paths() {
  return simd_paths_up_to(widest_simd_path(Avx512Subset::f));
}

void use_qsgd_encode_path(SimdPath path) {
  check_simd_path_available(path, widest_simd_path(Avx512Subset::f), "use_qsgd_encode_path");
  current_path().store(path, std::memory_order_relaxed);
}

float qsgd_encode(std::span<const float> v, unsigned levels, std::uint64_t key, std::size_t first,
                  std::span<std::uint64_t> code) {
  check(v.size(), levels, code.size());
  if (v.empty()) return 0;
  float norm = 0;
  encode(v, v.size(), levels, key, first, code, std::span(&norm, 1));
  return norm;
}

void qsgd_decode_add(std::span<const std::uint64_t> code, unsigned levels, float norm, float scale,
                     std::span<float> out) {
  check(out.size(), levels, code.size());
  const unsigned bits = qsgd_code_bits(levels);
  const std::size_t words = code.size();
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const float step = scale * norm / static_cast<float>(levels);
  for (std::size_t begin = 0, shift = 0; begin < out.size(); begin += words, shift += bits) {
    const std::size_t count = std::min(words, out.size() - begin);
    float* to = out.data() + begin;
    for (std::size_t w = 0; w < count; ++w) {
      const auto field = static_cast<std::uint32_t>((code[w] >> shift) & mask);
      const float magnitude = static_cast<float>(static_cast<std::int32_t>(field >> 1)) * step;
      // The sign bit moved onto the float's: random signs would mispredict a branch half the time.
      to[w] += std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) ^ (field << 31));
    }
  }
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
  encode(v, bucket, levels, key, 0, code, norms);
}

void qsgd_decode_add_buckets(std::span<const std::uint64_t> code, std::span<const float> norms,
                             std::size_t bucket, unsigned levels, float scale,
                             std::span<float> out) {
  check_qsgd_sizes(out.size(), bucket, levels, code.size(), norms.size());
  for (std::size_t b = 0; b < norms.size(); ++b) {
    const Bucket at = bucket_at(b, out.size(), bucket, levels);
    qsgd_decode_add(code.subspan(at.first_word, at.words), levels, norms[b], scale,
                    out.subspan(at.first, at.entries));
  }
}

}  // namespace commsgd::kernels
