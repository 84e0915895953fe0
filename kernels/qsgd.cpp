#include "kernels/qsgd.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/qsgd_draw.hpp"

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

// Σ v_i² in double, eight running sums so that no addition waits for the one before it.
double squared_norm(std::span<const float> v) {
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

// On x86-64 also built for AVX2, which the loader takes where the CPU has it (GCC's function
// multi-versioning): 32-bit multiplies eight at a time, the hash's cost. The same operations in
// either, and no FMA in either, so the same codes.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
float qsgd_encode(std::span<const float> v, unsigned levels, std::uint64_t key, std::size_t first,
                  std::span<std::uint64_t> code) {
  check(v.size(), levels, code.size());
  std::fill(code.begin(), code.end(), 0);
  const auto norm = static_cast<float>(std::sqrt(squared_norm(v)));
  if (norm == 0) return 0;
  const unsigned bits = qsgd_code_bits(levels);
  const std::size_t words = code.size();
  const float to_levels = static_cast<float>(levels) / norm;
  const auto top = static_cast<std::int32_t>(levels);
  // Field by field: entries f·W .. f·W + W − 1 into bits [b·f, b·f + b) of words 0 .. W − 1.
  for (std::size_t begin = 0, shift = 0; begin < v.size(); begin += words, shift += bits) {
    const std::size_t count = std::min(words, v.size() - begin);
    const float* in = v.data() + begin;
    // Entry indices in 32 bits, as the draws take them: a 64-bit counter costs the loop shuffles.
    auto i = static_cast<std::uint32_t>(first + begin);
    for (std::size_t w = 0; w < count; ++w, ++i) {
      const float a = std::fabs(in[w]) * to_levels;     // in [0, s], up to rounding
      const auto floor = static_cast<std::int32_t>(a);  // a >= 0: truncation is the floor
      const bool up = qsgd_draw::uniform(key, i) < a - static_cast<float>(floor);
      // At most s: |v_i| = ‖v‖ can round to a hair above s, and s + 1 would not fit the field.
      const std::int32_t level = std::min(floor + static_cast<std::int32_t>(up), top);
      const std::uint32_t sign = std::bit_cast<std::uint32_t>(in[w]) >> 31;
      code[w] |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(level) << 1 | sign) << shift;
    }
  }
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

namespace {

// Bucket b of a whole vector: its entries and its words.
struct Bucket {
  std::size_t first, entries, first_word, words;
};

Bucket bucket_at(std::size_t b, std::size_t n, std::size_t bucket, unsigned levels) {
  const std::size_t first = b * bucket, entries = std::min(bucket, n - first);
  return {first, entries, b * qsgd_words(bucket, levels), qsgd_words(entries, levels)};
}

}  // namespace

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
  for (std::size_t b = 0; b < norms.size(); ++b) {
    const Bucket at = bucket_at(b, v.size(), bucket, levels);
    norms[b] = qsgd_encode(v.subspan(at.first, at.entries), levels, key, at.first,
                           code.subspan(at.first_word, at.words));
  }
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
