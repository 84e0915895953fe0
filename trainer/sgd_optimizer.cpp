#include "trainer/sgd_optimizer.hpp"

#include <cmath>
#include <utility>

#include "kernels/ops.hpp"

namespace commsgd::trainer {

SgdOptimizer::SgdOptimizer(SgdSettings settings, std::vector<DecayStretch> stretches)
    : settings_(settings), stretches_(std::move(stretches)) {}

bool SgdOptimizer::step(kernels::Buffer<float> params, kernels::Buffer<float> grads,
                        kernels::Buffer<float> momentum, double lr) const {
  const double norm = std::sqrt(kernels::ops::squared_norm(grads));
  if (!std::isfinite(norm)) return false;
  if (settings_.clip_grad_norm > 0 && norm > settings_.clip_grad_norm) {
    kernels::ops::scale(grads, static_cast<float>(settings_.clip_grad_norm / norm));
  }
  kernels::SgdHyperParams hp{static_cast<float>(lr), static_cast<float>(settings_.momentum),
                             static_cast<float>(settings_.weight_decay), settings_.nesterov};
  for (const DecayStretch& stretch : stretches_) {
    hp.weight_decay = stretch.decays ? static_cast<float>(settings_.weight_decay) : 0.0f;
    kernels::ops::sgd_step(params.subspan(stretch.offset, stretch.count),
                           grads.subspan(stretch.offset, stretch.count),
                           momentum.subspan(stretch.offset, stretch.count), hp);
  }
  return true;
}

}  // namespace commsgd::trainer
