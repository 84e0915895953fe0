#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/epoch_schedule.hpp"
#include "algorithms/norm_study.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/sparse/selector.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// The sparse family (Top-k, gTop-k, Gaussian-k and the other selector × aggregation pairs), with
// error feedback. Per iteration, on every rank r (docs/design.md, "Sparse family"):
//   1. acc_r = g_r + e_r
//   2. S_r   = select(acc_r)                      the selector
//   3. U     = aggregate(S_1 .. S_P)              the aggregation; identical on every rank
//   4. e_r'  = acc_r, zeroed where S_r was applied (selected but not applied stays)
//   5. g     = U / P
// Conservation: Σ_r acc_r = U + Σ_r e_r' for every coordinate.
//
// Written against buffers and kernels/ops.hpp: g and e may be in host or CUDA memory. On a
// device, steps 1, 2, 4 and 5 run there; what crosses the bus is the selection S_r (to the host
// for the exchange, which runs over MPI as on the host) and U's sets back: O(k), not O(d), as
// gtopkssgd moved only the selected values. The studies (--grad-stats-every,
// --norm-study-every) look at acc on the host, so with them the trainer stages.
class SparseSgd final : public Algorithm {
 public:
  SparseSgd(const AlgorithmConfig& config, comm::Communicator& comm);

  bool works_in(kernels::Memory memory) const override;
  void begin_epoch(int epoch) override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  std::optional<GradStats> take_grad_stats() override { return std::exchange(grad_stats_, {}); }
  std::optional<NormStudy> take_norm_study() override { return norm_study_.take(); }
  // The residual e_r, and the iteration count that seeds the random selectors.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

  double density() const { return density_; }
  // e_r, for tests on host buffers.
  std::span<const float> residual() const { return residual_.buffer().host("residual"); }

 private:
  // e_r of g's size where g is: zero at the first step, or moved there from the host memory
  // load_state restored it to.
  void place_residual(Buffer<const float> grads);

  comm::Communicator& comm_;
  std::unique_ptr<Selector> selector_;
  std::unique_ptr<Aggregation> aggregation_;
  std::vector<EpochValue> density_schedule_;
  double density_;
  bool error_feedback_;
  std::uint64_t iteration_ = 0;
  kernels::ops::Storage<float> residual_;  // e_r where g is; holds acc_r during an iteration
  kernels::ops::SparseStaging staging_;    // the selection's copy on a device
  kernels::SparseSet selected_;
  std::vector<std::uint8_t> applied_;
  AlgorithmStats stats_;
  const int grad_stats_every_;
  const bool barrier_;  // before the exchange: AlgorithmConfig::barrier_before_communicate
  std::optional<GradStats> grad_stats_;
  NormStudyProbe norm_study_;
};

}  // namespace commsgd::algorithms
