#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/norm_study.hpp"
#include "kernels/low_rank.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// PowerSGD (Vogels et al., NeurIPS 2019, Algorithm 1), as PyTorch's DDP communication hook
// powerSGD_hook runs it: one step of subspace iteration a training step, warm-started from the
// last step's Q, with error feedback. Each parameter's gradient is a matrix M, its first dimension
// the rows and the rest the columns; with r = --powersgd-rank:
//   M = g + e                                 the gradient and what earlier steps left out
//   a matrix worth compressing, (n + m)·r·2 < n·m  (the hook's min_compression_rate 2):
//     Q = orthonormalize(Q)                   the last step's Q (random normal the first time)
//     P = M·Q                                 n × r
//   the rest (vectors, small matrices) as they are, and every P, in one allreduce (sum)
//   the rest = sum / world
//   P = orthonormalize(P)                     modified Gram–Schmidt, column by column
//   Q = Mᵀ·P, in one allreduce (sum) / world  m × r
//   g = P·Qᵀ                                  the approximation every rank applies
//   e = M − g                                 over the whole gradient, as the hook: for the rest,
//                                             this rank's deviation from the mean
// Before iteration --powersgd-start-iter the gradient is allreduced and averaged as is, without
// error feedback (the hook's start_powerSGD_iter). The hook allreduces the rest and the P's in
// two calls; one call here sends the same bytes with one latency less. State in checkpoints: the
// iteration, e and Q. Works where the gradient is, host or device, but for --norm-study-every,
// which reads the host's.
class PowerSgd : public Algorithm {
 public:
  // Uses config.powersgd_rank, powersgd_start_iter, seed (Q's first draw, the same on every
  // rank), barrier_before_communicate and norm_study_every.
  PowerSgd(comm::Communicator& comm, const AlgorithmConfig& config);

  // Throws std::invalid_argument where no parameter is worth compressing at this rank.
  void set_layout(std::span<const ParameterLayout> layout) override;
  bool works_in(kernels::Memory memory) const override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override { return stats_; }
  std::optional<NormStudy> take_norm_study() override { return norm_study_.take(); }
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

  // Every compressed matrix's factors of the last step, back to back in layout order, each by
  // columns (kernels/low_rank.hpp): P orthonormalized, Q averaged over the ranks. Copies, in host
  // memory.
  std::vector<float> p_factors() const;
  std::vector<float> q_factors() const;
  // Entries each rank allreduces a compressed step: the rest, every P and every Q.
  std::size_t compressed_entries() const { return rest_and_ps_.size() + qs_.size(); }

 private:
  struct Matrix {
    std::size_t offset;  // in the gradient
    kernels::MatrixShape shape;
    std::size_t p_offset, q_offset;  // in ps_, qs_
  };
  struct Stretch {  // a parameter sent as it is
    std::size_t offset, count;
  };

  void compress(Buffer<float> g);
  void allreduce(Buffer<float> values);
  void draw_q();
  // Moves e, the factors and the allreduce's buffer where the gradient is (nothing once there).
  void place(kernels::Place place);

  comm::Communicator& comm_;
  const std::size_t rank_;
  const long start_iteration_;
  const std::uint64_t seed_;
  const bool barrier_;
  std::vector<Matrix> matrices_;
  std::vector<Stretch> rest_;
  std::size_t rest_entries_ = 0;
  // Where the gradient is:
  kernels::ops::Storage<float> error_;        // e, then M = g + e during a step
  kernels::ops::Storage<float> rest_and_ps_;  // the first allreduce's: the rest, then every P
  kernels::ops::Storage<float> qs_;
  long iteration_ = 0;
  bool q_drawn_ = false;  // Q holds a last step's factor to start from
  AlgorithmStats stats_;
  NormStudyProbe norm_study_;  // --norm-study-every
};

}  // namespace commsgd::algorithms
