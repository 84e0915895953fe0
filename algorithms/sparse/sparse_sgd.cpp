#include "algorithms/sparse/sparse_sgd.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "algorithms/stored_values.hpp"
#include "algorithms/traffic_meter.hpp"
#include "kernels/moments.hpp"
#include "kernels/sparse_ops.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

SparseSgd::SparseSgd(const AlgorithmConfig& config, comm::Communicator& comm)
    : comm_(comm),
      selector_(make_selector(config, comm.rank())),
      aggregation_(make_aggregation(config, comm)),
      density_schedule_(parse_epoch_values(config.density_schedule)),
      density_(config.density),
      error_feedback_(config.error_feedback),
      grad_stats_every_(config.grad_stats_every),
      barrier_(config.barrier_before_communicate),
      norm_study_(comm, config.norm_study_every, config.seed) {
  // Preconditions for callers outside the trainer, whose parser checks what a person types.
  if (!(density_ > 0 && density_ <= 1)) {
    throw std::invalid_argument("sparse SGD: the density must be in (0, 1]");
  }
  for (const EpochValue& e : density_schedule_) {
    if (e.value > 1) throw std::invalid_argument("sparse SGD: a scheduled density is above 1");
  }
}

bool SparseSgd::works_in(kernels::Memory memory) const {
  if (memory == kernels::Memory::host) return true;
  return selector_->works_in(memory) && grad_stats_every_ == 0 && !norm_study_.enabled();
}

void SparseSgd::begin_epoch(int epoch) {
  for (const EpochValue& e : density_schedule_) {
    if (epoch >= e.epoch) density_ = e.value;
  }
}

namespace {

GradStats measure(std::span<const float> acc, const kernels::SparseSet& selected) {
  GradStats g;
  g.contraction = kernels::left_out_energy(acc, selected.indices);
  g.bound_linear = 1.0 - static_cast<double>(selected.size()) / static_cast<double>(acc.size());
  g.bound_squared = g.bound_linear * g.bound_linear;
  const kernels::Moments m = kernels::mean_std(acc);
  g.mean = m.mean;
  g.stddev = m.stddev;
  // A constant acc (e.g. all zero) has no spread: give its histogram a unit width.
  const double half_width = m.stddev > 0 ? 4 * m.stddev : 1.0;
  g.histogram = kernels::histogram(acc, m.mean - half_width, m.mean + half_width, 64);
  return g;
}

}  // namespace

void SparseSgd::synchronize_gradients(Buffer<float> grads) {
  const std::size_t d = grads.size();
  const std::size_t k = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(density_ * static_cast<double>(d))));
  place_residual(grads);
  const Buffer<float> acc = residual_.buffer();

  Stopwatch watch;
  if (error_feedback_) {
    kernels::ops::add(acc, grads);  // 1. acc = g + e
  } else {
    kernels::ops::copy(grads, acc);
  }
  selector_->select_in(acc, k, density_, iteration_, selected_);  // 2.
  stats_.select_seconds += watch.restart();
  if (grad_stats_every_ > 0 && comm_.rank() == 0 &&
      iteration_ % static_cast<std::uint64_t>(grad_stats_every_) == 0) {
    grad_stats_ = measure(acc.host("--grad-stats-every"), selected_);
    stats_.measure_seconds += watch.restart();  // not part of what sparsification costs
  }

  const bool norm_study = norm_study_.due(iteration_);
  if (norm_study) {  // the dense aggregate of the same step, outside what the step is charged
    norm_study_.take_dense(acc.host("--norm-study-every"), stats_);
    watch.restart();
  }

  if (barrier_) {
    comm_.barrier();
    stats_.wait_seconds += watch.restart();
  }
  const TrafficMeter traffic(comm_);
  aggregation_->exchange(selected_, k, applied_);  // 3.
  stats_.communicate_seconds += watch.restart();
  traffic.add_to(stats_.bytes_sent, stats_.bytes_received);

  aggregation_->write_update(grads);                                    //    grads = U
  kernels::ops::zero_applied(acc, selected_, applied_, staging_);       // 4. e' = acc minus applied
  kernels::ops::scale(grads, 1.0f / static_cast<float>(comm_.size()));  // 5.
  comm_.synchronize(grads.place());  // on a device, timed once done, not once enqueued
  // Writing U densely and the residual bookkeeping are local work that sparsification costs, as
  // much for every aggregation, so they count as selection, not communication.
  stats_.select_seconds += watch.restart();
  stats_.entries_sent += selected_.size();
  stats_.entries_offered += d;
  if (norm_study) {
    norm_study_.study(grads.host("--norm-study-every"), selected_.size(), iteration_, stats_);
  }
  ++iteration_;
}

void SparseSgd::save_state(StateWriter& out) {
  out.write(iteration_);
  write_values(out, residual_.buffer());
}

void SparseSgd::place_residual(Buffer<const float> grads) {
  if (residual_.size() == grads.size()) return kernels::ops::relocate(residual_, grads.place());
  assign_zeros(residual_, grads.size(), grads.place());
}

// Into host memory: place_residual moves it where the gradient is at the first step.
void SparseSgd::load_state(StateReader& in) {
  iteration_ = in.read<std::uint64_t>();
  read_values(in, residual_);
}

}  // namespace commsgd::algorithms
