#pragma once

#include <span>

namespace commsgd::kernels {

struct SgdHyperParams {
  float lr = 0.1f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

// One step of SGD with momentum over the whole flattened model, with exactly the arithmetic of
// torch.optim.SGD (dampening 0): g = grad + wd·p; buf = momentum·buf + g; p -= lr·(nesterov ?
// g + momentum·buf : buf). buf starts at zero, which equals torch's "buf = g on the first step".
// One fused pass instead of one small kernel per parameter tensor.
void sgd_step(std::span<float> params, std::span<const float> grads,
              std::span<float> momentum_buffer, const SgdHyperParams& hp);

}  // namespace commsgd::kernels
