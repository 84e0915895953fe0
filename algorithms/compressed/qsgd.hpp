#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "algorithms/algorithm.hpp"
#include "algorithms/compressed/code_allgather.hpp"
#include "algorithms/norm_study.hpp"

namespace commsgd::algorithms {

// QSGD (Alistarh et al., NeurIPS 2017, Algorithm 1 with the bucketing of its experiments), the
// ranks' quantized gradients averaged: with s = --qsgd-levels and buckets of --qsgd-bucket
// entries (the paper's d),
//   Q(v) = ‖v‖₂ · sign(v_i) · ξ_i / s       each bucket v of g_r, ξ_i a random level in 0..s
//                                           with E[ξ_i] = s·|v_i|/‖v‖₂ (kernels/qsgd.hpp)
//   all codes and norms to every rank       one allgather: the levels and signs packed, a float
//                                           norm a bucket
//   g = (1/P) Σ_r Q(g_r)                    decoded; unbiased, E[g] = (1/P) Σ_r g_r
// The draws are a function of (--seed, step, rank, entry): the step count is the state in
// checkpoints, and a resumed run draws what the run never stopped would have. Works where the
// gradient is, host or device, but for --norm-study-every, which reads the host's.
class Qsgd : public Algorithm {
 public:
  // Uses config.qsgd_levels, qsgd_bucket, seed, barrier_before_communicate and
  // norm_study_every.
  Qsgd(comm::Communicator& comm, const AlgorithmConfig& config);

  bool works_in(kernels::Memory memory) const override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  std::optional<NormStudy> take_norm_study() override { return norm_study_.take(); }
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 private:
  comm::Communicator& comm_;
  const unsigned levels_;
  const std::size_t bucket_;
  const std::uint64_t seed_;
  const bool barrier_;
  std::optional<CodeAllgather> exchange_;  // sized by the first gradient; the norms its scales
  std::int64_t step_ = 0;
  AlgorithmStats stats_;
  NormStudyProbe norm_study_;  // --norm-study-every
};

}  // namespace commsgd::algorithms
