// Tiny deterministic RNG shared by the synthetic data set, the sampler and
// batch augmentation. std:: distributions are implementation-defined, so using
// them would make shuffles and synthetic data differ between standard
// libraries; everything here is exact integer arithmetic (plus libm for
// Box-Muller in the synthetic loader).
#pragma once

#include <cstdint>

namespace commsgd::data {

// SplitMix64 (Steele, Lea & Flood, 2014): a whole generator in one 64-bit
// word, which is what lets gather_batch() carry its state as a plain integer.
inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Independent-looking state for sub-stream `stream` of `seed`, so that e.g.
// epochs 3 and 4 do not produce overlapping, shifted sequences.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t mixed = splitmix64_next(seed) ^ stream;
  return splitmix64_next(mixed);
}

// Uniform integer in [0, bound), bound > 0. Rejection removes modulo bias.
inline std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const std::uint64_t r = splitmix64_next(state);
    if (r >= threshold) return r % bound;
  }
}

// Uniform double in [0, 1) with 53 random bits.
inline double uniform01(std::uint64_t& state) {
  return static_cast<double>(splitmix64_next(state) >> 11) * 0x1.0p-53;
}

}  // namespace commsgd::data
