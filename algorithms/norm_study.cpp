#include "algorithms/norm_study.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"
#include "kernels/moments.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {
namespace {

// ‖x − u‖ for the update u the algorithm applied, ‖x − randk(x)‖ for k entries of x picked at
// random, and the bound, as gtopkssgd's allreducer.py does under PROFILING_NORM.
NormStudy study_norms(std::span<const float> x, std::span<const float> update, std::size_t k,
                      std::span<const float> randomly_kept) {
  const double x_squared = kernels::squared_norm(x);
  NormStudy s;
  s.dense_norm = std::sqrt(x_squared);
  s.dense_std = kernels::mean_std(x).stddev;
  s.selected_distance = std::sqrt(kernels::squared_distance(x, update));
  s.randk_distance = std::sqrt(std::max(0.0, x_squared - kernels::squared_norm(randomly_kept)));
  s.bound = (1.0 - static_cast<double>(k) / static_cast<double>(x.size())) * s.dense_norm;
  return s;
}

}  // namespace

void NormStudyProbe::take_dense(std::span<const float> acc, AlgorithmStats& stats,
                                std::span<const float> extra) {
  const Stopwatch watch;
  dense_mean_.assign(acc.begin(), acc.end());
  if (!extra.empty()) kernels::add_blocks(dense_mean_, extra, 1.0f);
  const TrafficMeter traffic(comm_);
  comm_.allreduce(std::span(dense_mean_), comm::ReduceOp::sum);
  traffic.add_to(stats.measure_bytes_sent, stats.measure_bytes_received);
  kernels::scale(dense_mean_, 1.0f / static_cast<float>(comm_.size()));
  stats.measure_seconds += watch.seconds();
}

void NormStudyProbe::study(std::span<const float> update, std::size_t k, std::uint64_t iteration,
                           AlgorithmStats& stats) {
  const Stopwatch watch;
  k = std::min(k, dense_mean_.size());
  if (comm_.rank() == 0) {
    random_picked_.clear();  // a selection of nothing (a threshold above every entry) keeps none
    if (k > 0) random_k_.select(dense_mean_, k, seed_ ^ iteration, random_picked_);
    result_ = study_norms(dense_mean_, update, k, random_picked_.values);
  }
  comm_.barrier();  // the other ranks' wait for rank 0 belongs to the measurement too
  stats.measure_seconds += watch.seconds();
}

void NormStudyProbe::study_at_equal_bytes(std::span<const float> update, std::size_t bytes,
                                          std::uint64_t iteration, AlgorithmStats& stats) {
  study(update, bytes / kernels::kSparseEntryBytes, iteration, stats);
}

}  // namespace commsgd::algorithms
