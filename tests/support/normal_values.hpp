#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace commsgd::testing {

// n draws of N(0, 1) from a generator seeded with `seed`: the same values for the same seed.
inline std::vector<float> normal_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace commsgd::testing
