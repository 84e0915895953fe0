#include "kernels/vector_ops.hpp"

#include <cstddef>

namespace commsgd::kernels {

void scale(std::span<float> x, float factor) {
  float* __restrict p = x.data();
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) p[i] *= factor;
}

double squared_norm(std::span<const float> x) {
  const float* __restrict p = x.data();
  const std::size_t n = x.size();
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(p[i]) * p[i];
  return sum;
}

double squared_distance(std::span<const float> a, std::span<const float> b) {
  const float* __restrict p = a.data();
  const float* __restrict q = b.data();
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = static_cast<double>(p[i]) - q[i];
    sum += diff * diff;
  }
  return sum;
}

void add_blocks(std::span<float> x, std::span<const float> blocks, float share) {
  float* __restrict mine = x.data();
  const float* __restrict theirs = blocks.data();
  const std::size_t n = x.size(), count = n == 0 ? 0 : blocks.size() / n;
  for (std::size_t j = 0; j < n; ++j) {
    float sum = mine[j];
    for (std::size_t b = 0; b < count; ++b) sum += theirs[b * n + j];
    mine[j] = sum * share;
  }
}

void subtract(std::span<float> x, std::span<const float> y) {
  float* __restrict mine = x.data();
  const float* __restrict other = y.data();
  for (std::size_t i = 0; i < x.size(); ++i) mine[i] -= other[i];
}

void add_difference(std::span<float> x, std::span<const float> a, std::span<const float> b) {
  float* __restrict mine = x.data();
  const float* __restrict plus = a.data();
  const float* __restrict minus = b.data();
  for (std::size_t i = 0; i < x.size(); ++i) mine[i] += plus[i] - minus[i];
}

}  // namespace commsgd::kernels
