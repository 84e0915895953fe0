#pragma once

#include <optional>

#include "algorithms/algorithm.hpp"
#include "algorithms/compressed/code_allgather.hpp"

namespace commsgd::algorithms {

// signSGD with majority vote (Bernstein et al., ICML 2018, Algorithm 1 with the vote of its
// Section 3): each rank sends the sign of its gradient, one bit an entry; the update is the sign
// of the ranks' sum of signs, which the optimizer applies with the learning rate:
//   s_r = sign(g_r)                      every rank, packed (kernels/sign_bits.hpp)
//   all s_r to every rank                one allgather of ⌈d/64⌉ words a rank
//   g = sign(Σ_r s_r)                    the majority vote; 0 where an even P ties
// The paper's server sends the vote back as bits; every rank taking the vote itself from the
// allgathered signs sends the same bits once instead of twice, and reaches the same vote.
// Nothing carries over between iterations. Works where the gradient is, host or device.
class SignSgd : public Algorithm {
 public:
  // Uses config.barrier_before_communicate.
  SignSgd(comm::Communicator& comm, const AlgorithmConfig& config);

  bool works_in(kernels::Memory) const override { return true; }
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  void save_state(StateWriter&) override {}
  void load_state(StateReader&) override {}

 private:
  comm::Communicator& comm_;
  const bool barrier_;
  std::optional<CodeAllgather> exchange_;  // sized by the first gradient
  AlgorithmStats stats_;
};

}  // namespace commsgd::algorithms
