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

}  // namespace commsgd::kernels
