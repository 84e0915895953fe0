#include "kernels/qsgd.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace commsgd::kernels {
namespace {

// SplitMix64's finalizer: a well-mixed 64-bit value for every input.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) for entry i under `key`: 24 bits, a float's mantissa.
float uniform(std::uint64_t key, std::size_t i) {
  const std::uint64_t bits = mix(key + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(i) + 1));
  return static_cast<float>(bits >> 40) * 0x1.0p-24f;
}

void check(std::size_t entries, unsigned levels, std::size_t words) {
  if (levels == 0) throw std::invalid_argument("qsgd: levels must be >= 1");
  if (words != qsgd_words(entries, levels)) {
    throw std::invalid_argument("qsgd: the code is not qsgd_words(entries, levels) words");
  }
}

}  // namespace

std::uint64_t qsgd_key(std::uint64_t seed, std::uint64_t stream) {
  return mix(mix(seed) ^ (stream + 0x632be59bd9b4e019ULL));
}

float qsgd_encode(std::span<const float> v, unsigned levels, std::uint64_t key, std::size_t first,
                  std::span<std::uint64_t> code) {
  check(v.size(), levels, code.size());
  double squares = 0;
  for (const float x : v) squares += static_cast<double>(x) * x;
  const auto norm = static_cast<float>(std::sqrt(squares));
  if (norm == 0) {
    for (std::uint64_t& word : code) word = 0;
    return 0;
  }
  const unsigned bits = qsgd_code_bits(levels);
  const std::size_t per_word = qsgd_codes_per_word(levels);
  const float to_levels = static_cast<float>(levels) / norm;
  // Word by word, each code shifted in above the last: no division an entry.
  for (std::size_t w = 0, j = 0; w < code.size(); ++w) {
    const std::size_t end = std::min(j + per_word, v.size());
    std::uint64_t word = 0;
    for (unsigned shift = 0; j < end; ++j, shift += bits) {
      const float a = std::fabs(v[j]) * to_levels;  // in [0, s]
      const float floor = std::floor(a);
      const auto level = static_cast<std::uint64_t>(floor) + (uniform(key, first + j) < a - floor);
      word |= (level << 1 | static_cast<std::uint64_t>(std::signbit(v[j]))) << shift;
    }
    code[w] = word;
  }
  return norm;
}

void qsgd_decode_add(std::span<const std::uint64_t> code, unsigned levels, float norm, float scale,
                     std::span<float> out) {
  check(out.size(), levels, code.size());
  const unsigned bits = qsgd_code_bits(levels);
  const std::size_t per_word = qsgd_codes_per_word(levels);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const float step = scale * norm / static_cast<float>(levels);
  for (std::size_t w = 0, j = 0; w < code.size(); ++w) {
    const std::size_t end = std::min(j + per_word, out.size());
    for (std::uint64_t word = code[w]; j < end; ++j, word >>= bits) {
      // ±1 from the sign bit by arithmetic: random signs would mispredict a branch half the time.
      const float sign = 1.0f - 2.0f * static_cast<float>(word & 1);
      out[j] += static_cast<float>((word & mask) >> 1) * step * sign;
    }
  }
}

}  // namespace commsgd::kernels
