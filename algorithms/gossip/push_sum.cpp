#include "algorithms/gossip/push_sum.hpp"

#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

void PushSum::to_numerator(std::span<float> params) const {
  if (w_ != 1.0f) kernels::scale(params, w_);
}

float PushSum::split(std::span<float> x, std::size_t out_degree) {
  const float share = 1.0f / static_cast<float>(out_degree + 1);
  kernels::scale(x, share);
  w_ *= share;
  return w_;
}

float PushSum::weight(std::span<const std::vector<float>> pending) const {
  float w = w_;
  for (const std::vector<float>& m : pending) w += m[0];
  return w;
}

void PushSum::to_model(std::span<float> params, std::span<const std::vector<float>> pending) const {
  const float inverse = 1.0f / weight(pending);
  float* __restrict p = params.data();
  if (pending.empty()) {
    for (std::size_t i = 0; i < params.size(); ++i) p[i] *= inverse;
    return;
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    float sum = p[i];
    for (const std::vector<float>& m : pending) sum += m[i + 1];
    p[i] = sum * inverse;
  }
}

}  // namespace commsgd::algorithms
