#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "kernels/sampling.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::algorithms {

// The gTop-k paper's norm study (--norm-study-every; its code's PROFILING_NORM), for any
// algorithm whose update is in gradient units: how far the update u an iteration applies lands
// from the dense aggregate x = (1/P)·Σ_r acc_r of the same step, beside k entries of x kept at
// random. The sparse family's k is the entries this rank selected; a compressed algorithm's is
// as many (index, value) pairs of 8 bytes as the bytes this rank puts into the exchange
// (equal-bytes random-k). Its allreduce and its seconds are the measurement's, not the step's.
class NormStudyProbe {
 public:
  NormStudyProbe(comm::Communicator& comm, int every, std::uint64_t seed)
      : comm_(comm), every_(every), seed_(seed) {}

  bool enabled() const { return every_ > 0; }
  // Whether iteration `iteration` is studied (every `every` iterations from 0; never where 0).
  bool due(std::uint64_t iteration) const {
    return every_ > 0 && iteration % static_cast<std::uint64_t>(every_) == 0;
  }
  // On every rank, before the exchange: x = (1/P)·Σ_r (acc_r + extra_r), extra empty or of acc's
  // size (an algorithm that keeps g and e apart passes both).
  void take_dense(std::span<const float> acc, AlgorithmStats& stats,
                  std::span<const float> extra = {});
  // On every rank, once u is written: rank 0 measures, keeping k of x's entries at random (seeded
  // by the run's seed and the iteration), and every rank waits for it.
  void study(std::span<const float> update, std::size_t k, std::uint64_t iteration,
             AlgorithmStats& stats);
  // The same with equal-bytes random-k: k is as many sparse entries (a 4-byte index and a 4-byte
  // value) as `bytes`, what this rank put into the exchange.
  void study_at_equal_bytes(std::span<const float> update, std::size_t bytes,
                            std::uint64_t iteration, AlgorithmStats& stats);
  // The last study rank 0 took, if any; cleared by the call.
  std::optional<NormStudy> take() { return std::exchange(result_, {}); }

 private:
  comm::Communicator& comm_;
  const int every_;
  const std::uint64_t seed_;
  std::vector<float> dense_mean_;  // x
  kernels::RandomSelector random_k_;
  kernels::SparseSet random_picked_;
  std::optional<NormStudy> result_;
};

}  // namespace commsgd::algorithms
