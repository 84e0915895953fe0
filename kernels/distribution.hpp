// What the "Understanding Top-k" study measures of a vector (Shi et al., 2019): how much of its
// energy a sparse selection leaves out, and the shape of its values' distribution.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace commsgd::kernels {

// ‖x − x_S‖² / ‖x‖², where x_S keeps the entries of x at `indices` (each at most once) and zeroes
// the rest: 0 when S holds all of x's energy, 1 when none. 0 for x = 0. Throws
// std::invalid_argument for an index out of range.
double left_out_energy(std::span<const float> x, std::span<const std::uint32_t> indices);

// Counts of x's values in `bins` equal bins over [low, high); values outside go to below/above.
struct Histogram {
  double low = 0, high = 0;
  std::vector<std::uint64_t> counts;
  std::uint64_t below = 0, above = 0;
};
// Throws std::invalid_argument unless low < high and bins > 0.
Histogram histogram(std::span<const float> x, double low, double high, std::size_t bins);

}  // namespace commsgd::kernels
