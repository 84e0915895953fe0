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

float PushSum::weight(std::span<const float> pending) const {
  float w = w_;
  for (const float m : pending) w += m;
  return w;
}

void PushSum::to_model(kernels::Buffer<float> params, std::span<const float> pending) const {
  kernels::ops::scale(params, 1.0f / weight(pending));
}

}  // namespace commsgd::algorithms
