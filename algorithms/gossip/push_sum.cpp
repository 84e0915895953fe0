#include "algorithms/gossip/push_sum.hpp"

#include "kernels/ops.hpp"

namespace commsgd::algorithms {

void PushSum::to_numerator(kernels::Buffer<float> params) const {
  if (w_ != 1.0f) kernels::ops::scale(params, w_);
}

float PushSum::split(kernels::Buffer<float> x, std::size_t out_degree) {
  const float share = 1.0f / static_cast<float>(out_degree + 1);
  kernels::ops::scale(x, share);
  w_ *= share;
  return w_;
}

float PushSum::weight(std::span<const std::vector<float>> pending) const {
  float w = w_;
  for (const std::vector<float>& m : pending) w += m[0];
  return w;
}

void PushSum::to_model(kernels::Buffer<float> params) const {
  kernels::ops::scale(params, 1.0f / w_);
}

void PushSum::to_model(std::span<float> params, std::span<const std::vector<float>> pending) const {
  const float inverse = 1.0f / weight(pending);
  float* __restrict p = params.data();
  for (std::size_t i = 0; i < params.size(); ++i) {
    float sum = p[i];
    for (const std::vector<float>& m : pending) sum += m[i + 1];
    p[i] = sum * inverse;
  }
}

}  // namespace commsgd::algorithms
