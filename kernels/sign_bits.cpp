#include "kernels/sign_bits.hpp"

#include <cmath>
#include <stdexcept>

namespace commsgd::kernels {

void pack_signs(std::span<const float> v, std::span<std::uint64_t> bits) {
  if (bits.size() != sign_words(v.size())) {
    throw std::invalid_argument("pack_signs: the bits need ⌈entries / 64⌉ words");
  }
  const std::size_t whole = v.size() / kSignsPerWord;
  // A word at a time, the 64 compares independent of each other, so that the compiler can keep
  // them in vector registers.
  for (std::size_t w = 0; w < whole; ++w) {
    const float* block = v.data() + w * kSignsPerWord;
    std::uint64_t word = 0;
    for (std::size_t j = 0; j < kSignsPerWord; ++j) {
      word |= static_cast<std::uint64_t>(block[j] < 0.0f) << j;
    }
    bits[w] = word;
  }
  if (whole < bits.size()) {
    std::uint64_t word = 0;
    for (std::size_t i = whole * kSignsPerWord; i < v.size(); ++i) {
      word |= static_cast<std::uint64_t>(v[i] < 0.0f) << (i % kSignsPerWord);
    }
    bits[whole] = word;
  }
}

void add_signs(std::span<const std::uint64_t> bits, std::size_t first, float scale,
               std::span<float> out) {
  if (first + out.size() > bits.size() * kSignsPerWord) {
    throw std::invalid_argument("add_signs: the entries run past the packed signs");
  }
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::size_t i = first + j;
    const bool negative = (bits[i / kSignsPerWord] >> (i % kSignsPerWord)) & 1u;
    out[j] += negative ? -scale : scale;
  }
}

void sign_in_place(std::span<float> x) {
  for (float& v : x) v = static_cast<float>((v > 0.0f) - (v < 0.0f));
}

double l1_norm(std::span<const float> x) {
  // Eight running sums, so that no addition waits for the one before it.
  constexpr std::size_t kLanes = 8;
  double lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= x.size(); i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += std::fabs(x[i + l]);
  }
  double sum = 0;
  for (; i < x.size(); ++i) sum += std::fabs(x[i]);
  for (const double lane : lanes) sum += lane;
  return sum;
}

}  // namespace commsgd::kernels
