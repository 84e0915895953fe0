// The optimizer every algorithm's update goes through, on the flat buffers wherever they live
// (kernels/ops.hpp): the gradient clipped to a norm, then SGD with momentum, heavy-ball or
// Nesterov, with torch.optim.SGD's arithmetic (kernels/sgd.hpp), and weight decay only where the
// model's parameters take it.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/buffer.hpp"

namespace commsgd::trainer {

// A stretch of the flat parameter buffer, and whether weight decay applies to it.
struct DecayStretch {
  std::size_t offset = 0, count = 0;
  bool decays = true;
};

struct SgdSettings {
  double momentum = 0;
  double weight_decay = 0;
  bool nesterov = false;
  double clip_grad_norm = 0;  // 0: no clipping
};

class SgdOptimizer {
 public:
  // `stretches` cover the flat buffer, in order (weight_decay.hpp makes them from a model).
  SgdOptimizer(SgdSettings settings, std::vector<DecayStretch> stretches);

  // One update at learning rate `lr`: `grads` scaled down in place to the clip norm when it is
  // longer, then `params` and `momentum` stepped stretch by stretch. Returns false, changing
  // nothing, when the gradient's norm is not finite (a NaN or Inf reached the update).
  bool step(kernels::Buffer<float> params, kernels::Buffer<float> grads,
            kernels::Buffer<float> momentum, double lr) const;

 private:
  SgdSettings settings_;
  std::vector<DecayStretch> stretches_;
};

}  // namespace commsgd::trainer
