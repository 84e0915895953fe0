#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/compressed/code_allgather.hpp"
#include "algorithms/norm_study.hpp"

namespace commsgd::algorithms {

// EF-signSGD (Karimireddy et al., ICML 2019, Algorithm 1, "EF-SGD", with the scaled sign as its
// compressor, tensor by tensor as the paper's experiments), the ranks' compressed steps averaged:
//   p = g + e                            the gradient and what earlier compressions left out
//   Δ_t = (‖p_t‖₁ / d_t) · sign(p_t)     for each parameter tensor t of d_t entries
//   e = p − Δ                            the error, fed back next iteration
//   all (sign(p), scales) to every rank  one allgather: ⌈d/64⌉ words and a float a tensor
//   g = (1/P) Σ_r Δ_r                    which the optimizer applies with the learning rate
// The paper's p is γg + e, in units of the step; here e is in units of the gradient, as PyTorch's
// PowerSGD hook and GRACE keep their residuals: the same iterates at a constant learning rate.
// The error is the algorithm's state, kept in checkpoints. Works where the gradient is, host or
// device, but for --norm-study-every, which reads the host's.
class EfSignSgd : public Algorithm {
 public:
  // Uses config.barrier_before_communicate, norm_study_every and seed.
  EfSignSgd(comm::Communicator& comm, const AlgorithmConfig& config);

  void set_layout(std::span<const ParameterLayout> layout) override;
  bool works_in(kernels::Memory memory) const override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  std::optional<NormStudy> take_norm_study() override { return norm_study_.take(); }
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 private:
  comm::Communicator& comm_;
  const bool barrier_;
  std::vector<ParameterLayout> layout_;
  kernels::ops::Storage<float> error_;  // e, one entry per parameter entry, where g is
  std::vector<float> scales_;  // this rank's ‖p_t‖₁ / d_t
  std::vector<float> received_scales_;  // a rank's, as the allgather brought them
  std::optional<CodeAllgather> exchange_;
  std::uint64_t step_ = 0;  // steps taken, for --norm-study-every
  AlgorithmStats stats_;
  NormStudyProbe norm_study_;  // --norm-study-every
};

}  // namespace commsgd::algorithms
