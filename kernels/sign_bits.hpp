#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace commsgd::kernels {

// Signs packed one bit an entry, as signSGD and EF-signSGD send them: entry i is bit i % 64 of
// word i / 64, set where the entry is negative. +0, −0 and NaN count as positive, so that every
// entry has a sign of ±1 to vote with (a gradient entry of exactly 0 is rare, and the papers'
// sign(0) = 0 cannot be sent in one bit).
constexpr std::size_t kSignsPerWord = 64;

// Words that hold the signs of `entries` entries: ⌈entries / 64⌉.
constexpr std::size_t sign_words(std::size_t entries) {
  return (entries + kSignsPerWord - 1) / kSignsPerWord;
}

// Packs the signs of v into bits (sign_words(v.size()) words; the unused bits of the last one 0).
void pack_signs(std::span<const float> v, std::span<std::uint64_t> bits);

// out[j] += ±scale, the sign of entry first + j of `bits`, for j < out.size(): one tensor's
// share of a packed vector, decoded and added.
void add_signs(std::span<const std::uint64_t> bits, std::size_t first, float scale,
               std::span<float> out);

// x[i] = sign(x[i]): −1, 0 or 1 (the majority vote of sums of ±1; 0 where they tie).
void sign_in_place(std::span<float> x);

// Σ |x_i|, in double.
double l1_norm(std::span<const float> x);

}  // namespace commsgd::kernels
