#include "kernels/distribution.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/vector_ops.hpp"

namespace commsgd::kernels {

double left_out_energy(std::span<const float> x, std::span<const std::uint32_t> indices) {
  const double total = squared_norm(x);
  double kept = 0;
  for (const std::uint32_t i : indices) {
    if (i >= x.size()) {
      throw std::invalid_argument("left_out_energy: index " + std::to_string(i) +
                                  " is outside a vector of " + std::to_string(x.size()));
    }
    kept += static_cast<double>(x[i]) * x[i];
  }
  // Rounding may put `kept` a hair above `total` when S holds nearly everything.
  return total > 0 ? std::max(0.0, total - kept) / total : 0.0;
}

Histogram histogram(std::span<const float> x, double low, double high, std::size_t bins) {
  if (!(low < high) || bins == 0) {
    throw std::invalid_argument("histogram: needs low < high and at least one bin");
  }
  Histogram h{low, high, std::vector<std::uint64_t>(bins, 0), 0, 0};
  const double per_unit = static_cast<double>(bins) / (high - low);
  for (const float v : x) {
    if (v < low) {
      ++h.below;
    } else if (v >= high) {
      ++h.above;
    } else {
      const auto bin = static_cast<std::size_t>((v - low) * per_unit);
      ++h.counts[std::min(bin, bins - 1)];  // v just below high may round up to `bins`
    }
  }
  return h;
}

}  // namespace commsgd::kernels
