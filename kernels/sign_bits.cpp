#include "kernels/sign_bits.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace commsgd::kernels {

static_assert(std::endian::native == std::endian::little,
              "the packed signs are read a byte at a time as little-endian words");

void pack_signs(std::span<const float> v, std::span<std::uint64_t> bits) {
  if (bits.size() != sign_words(v.size())) {
    throw std::invalid_argument("pack_signs: the bits need ⌈entries / 64⌉ words");
  }
  const std::size_t whole = v.size() / kSignsPerWord;
  for (std::size_t w = 0; w < whole; ++w) {
    // The 64 compares as bytes of 0 or 1, a loop the compiler vectorizes; then each 8 bytes to 8
    // bits by one multiply: byte k's 1 (bit 8k) times 2^(56 − 7k) lands on bit 56 + k, and no two
    // other products share a bit, so nothing carries into the top byte.
    const float* block = v.data() + w * kSignsPerWord;
    std::uint8_t negative[kSignsPerWord];
    for (std::size_t j = 0; j < kSignsPerWord; ++j) negative[j] = block[j] < 0.0f;
    std::uint64_t word = 0;
    for (std::size_t b = 0; b < kSignsPerWord / 8; ++b) {
      std::uint64_t flags;
      std::memcpy(&flags, negative + 8 * b, sizeof flags);
      word |= ((flags * 0x0102040810204080u) >> 56) << (8 * b);
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

namespace {

bool negative_at(std::span<const std::uint64_t> bits, std::size_t i) {
  return (bits[i / kSignsPerWord] >> (i % kSignsPerWord)) & 1u;
}

}  // namespace

void add_signs(std::span<const std::uint64_t> bits, std::size_t first, float scale,
               std::span<float> out) {
  if (first + out.size() > bits.size() * kSignsPerWord) {
    throw std::invalid_argument("add_signs: the entries run past the packed signs");
  }
  std::size_t j = 0;
  for (; j < out.size() && (first + j) % 8 != 0; ++j) {
    out[j] += negative_at(bits, first + j) ? -scale : scale;
  }
  // ±scale for each bit of a nibble, bit k in lane k: four entries decoded by one add of four
  // floats. Written with GCC's vector type because the compiler leaves the same loop over four
  // floats scalar (a shift by a varying bit would not vectorize either).
  using Float4 = float __attribute__((vector_size(16)));
  Float4 nibble_values[16];
  for (int nibble = 0; nibble < 16; ++nibble) {
    for (int k = 0; k < 4; ++k) nibble_values[nibble][k] = (nibble >> k) & 1 ? -scale : scale;
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(bits.data());
  for (; j + 8 <= out.size(); j += 8) {
    // Little-endian: byte b of the words holds entries 8b .. 8b + 7, the low nibble first.
    const unsigned byte = bytes[(first + j) / 8];
    Float4 low, high;
    std::memcpy(&low, out.data() + j, sizeof low);
    std::memcpy(&high, out.data() + j + 4, sizeof high);
    low += nibble_values[byte & 15u];
    high += nibble_values[byte >> 4];
    std::memcpy(out.data() + j, &low, sizeof low);
    std::memcpy(out.data() + j + 4, &high, sizeof high);
  }
  for (; j < out.size(); ++j) out[j] += negative_at(bits, first + j) ? -scale : scale;
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
