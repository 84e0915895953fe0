#include "kernels/sgd.hpp"

#include <cstddef>
#include <stdexcept>

namespace commsgd::kernels {

void sgd_step(std::span<float> params, std::span<const float> grads,
              std::span<float> momentum_buffer, const SgdHyperParams& hp) {
  if (grads.size() != params.size() || momentum_buffer.size() != params.size()) {
    throw std::invalid_argument("sgd_step: params, grads and momentum buffer differ in size");
  }
  float* __restrict p = params.data();
  const float* __restrict g = grads.data();
  float* __restrict buf = momentum_buffer.data();
  const std::size_t n = params.size();
  const float lr = hp.lr, mu = hp.momentum, wd = hp.weight_decay;
  // Separate loops per variant keep each one branch-free, so each vectorizes.
  if (hp.nesterov) {
    for (std::size_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * p[i];
      buf[i] = mu * buf[i] + d;
      p[i] -= lr * (d + mu * buf[i]);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * p[i];
      buf[i] = mu * buf[i] + d;
      p[i] -= lr * buf[i];
    }
  }
}

}  // namespace commsgd::kernels
