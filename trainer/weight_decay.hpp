#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "trainer/sgd_optimizer.hpp"

namespace commsgd::trainer {

// The flat buffer (model.parameters() in order) cut where weight decay starts or stops applying,
// the fewest stretches that cover it. All of it decays; with `spare_one_dimensional`
// (--no-decay-bn-bias) the one-dimensional parameters do not: batch-norm scales and shifts, and
// biases, as the GaussianK-SGD code groups its parameters (dl_trainer.py).
std::vector<DecayStretch> decay_stretches(torch::nn::Module& model, bool spare_one_dimensional);

}  // namespace commsgd::trainer
