#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/epoch_schedule.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/sparse/selector.hpp"
#include "kernels/sampling.hpp"

namespace commsgd::algorithms {

// The sparse family (Top-k, gTop-k, Gaussian-k and the other selector × aggregation pairs), with
// error feedback. Per iteration, on every rank r (docs/design.md, "Sparse family"):
//   1. acc_r = g_r + e_r
//   2. S_r   = select(acc_r)                      the selector
//   3. U     = aggregate(S_1 .. S_P)              the aggregation; identical on every rank
//   4. e_r'  = acc_r, zeroed where S_r was applied (selected but not applied stays)
//   5. g     = U / P
// Conservation: Σ_r acc_r = U + Σ_r e_r' for every coordinate.
class SparseSgd final : public Algorithm {
 public:
  SparseSgd(const AlgorithmConfig& config, comm::Communicator& comm);

  void begin_epoch(int epoch) override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  std::optional<GradStats> take_grad_stats() override { return std::exchange(grad_stats_, {}); }
  std::optional<NormStudy> take_norm_study() override { return std::exchange(norm_study_, {}); }
  // The residual e_r, and the iteration count that seeds the random selectors.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

  double density() const { return density_; }
  std::span<const float> residual() const { return residual_; }

 private:
  comm::Communicator& comm_;
  std::unique_ptr<Selector> selector_;
  std::unique_ptr<Aggregation> aggregation_;
  std::vector<EpochValue> density_schedule_;
  double density_;
  bool error_feedback_;
  std::uint64_t iteration_ = 0;
  std::vector<float> residual_;  // e_r; holds acc_r during an iteration
  kernels::SparseSet selected_;
  std::vector<std::uint8_t> applied_;
  AlgorithmStats stats_;
  const int grad_stats_every_;
  const bool barrier_;  // before the exchange: AlgorithmConfig::barrier_before_communicate
  std::optional<GradStats> grad_stats_;
  const int norm_study_every_;
  const std::uint64_t seed_;
  std::optional<NormStudy> norm_study_;
  std::vector<float> dense_mean_;  // the norm study's x = (1/P)·Σ_r acc_r, when it measures
  kernels::RandomSelector random_k_;
  kernels::SparseSet random_picked_;
};

}  // namespace commsgd::algorithms
