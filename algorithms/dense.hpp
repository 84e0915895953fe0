#pragma once

#include "algorithms/algorithm.hpp"

namespace commsgd::algorithms {

// Dense S-SGD, the baseline: every rank allreduces its whole gradient and applies the mean.
class Dense final : public Algorithm {
 public:
  explicit Dense(comm::Communicator& comm) : comm_(comm) {}

  void synchronize_gradients(std::span<float> grads) override;
  void after_step(std::span<float>) override {}
  std::span<const float> model_for_evaluation(std::span<const float> params) override {
    return params;
  }
  AlgorithmStats stats() const override { return stats_; }
  // Dense S-SGD keeps nothing between iterations: the parameters and optimizer say it all.
  void save_state(StateWriter&) override {}
  void load_state(StateReader&) override {}

 private:
  comm::Communicator& comm_;
  AlgorithmStats stats_;
};

}  // namespace commsgd::algorithms
