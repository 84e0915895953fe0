#include "trainer/step_metrics.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace commsgd::trainer {

std::array<double, StepMetrics::kFields> StepMetrics::fields_of(const IterationSample& s) {
  return {s.loss,           s.data_s,        s.forward_backward_s,
          s.select_s,       s.communicate_s, s.wait_s,
          s.update_s,       s.total_s,       s.bytes_sent,
          s.bytes_received, s.density,       s.overlapped_communicate_s};
}

void StepMetrics::add(const IterationSample& sample) {
  const auto fields = fields_of(sample);
  // A non-finite loss (a batch --on-nonfinite skip-step left out) is no loss to average.
  const bool finite_loss = std::isfinite(sample.loss);
  for (std::size_t i = finite_loss ? 0 : 1; i < kFields; ++i) sum_[i] += fields[i];
  ++iterations_;
  loss_iterations_ += finite_loss ? 1 : 0;
}

void StepMetrics::close_window(std::int64_t step) {
  if (iterations_ == 0) return;
  Window w{{}, step, loss_iterations_ > 0};
  for (std::size_t i = 0; i < kFields; ++i) w.mean[i] = sum_[i] / iterations_;
  if (w.has_loss) w.mean[0] = sum_[0] / loss_iterations_;
  windows_.push_back(w);
  sum_.fill(0.0);
  iterations_ = 0;
  loss_iterations_ = 0;
}

std::vector<record::StepRow> StepMetrics::reduce(comm::Communicator& comm, int epoch) {
  std::int64_t count = static_cast<std::int64_t>(windows_.size());
  comm.allreduce(std::span(&count, 1), comm::ReduceOp::max);
  const auto n = static_cast<std::size_t>(count);

  // Window j of every rank that has one: sums and counts for the mean, maxima for the max (a
  // rank without window j adds nothing and contributes -inf), and the latest step it ended at.
  // The loss counts separately: a window may have no finite loss on a rank.
  std::vector<double> sums(n * kFields, 0.0), present(2 * n, 0.0);
  std::vector<double> maxima(n * kFields, -std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> steps(n, 0);
  for (std::size_t j = 0; j < windows_.size(); ++j) {
    const Window& w = windows_[j];
    for (std::size_t i = w.has_loss ? 0 : 1; i < kFields; ++i) {
      sums[j * kFields + i] = w.mean[i];
      maxima[j * kFields + i] = w.mean[i];
    }
    present[2 * j] = 1;
    present[2 * j + 1] = w.has_loss ? 1 : 0;
    steps[j] = w.step;
  }
  comm.allreduce(std::span(sums), comm::ReduceOp::sum);
  comm.allreduce(std::span(present), comm::ReduceOp::sum);
  comm.allreduce(std::span(maxima), comm::ReduceOp::max);
  comm.allreduce(std::span(steps), comm::ReduceOp::max);
  windows_.clear();

  std::vector<record::StepRow> rows(n);
  for (std::size_t j = 0; j < n; ++j) {
    record::StepRow& row = rows[j];
    // Ranks out of lockstep end window j at different iterations: keep the rows' steps distinct
    // and increasing.
    row.step = std::max(steps[j], last_step_ + 1);
    last_step_ = row.step;
    row.epoch = epoch;
    record::Stat* stats[kFields] = {
        &row.loss,           &row.data_s,        &row.forward_backward_s,
        &row.select_s,       &row.communicate_s, &row.wait_s,
        &row.update_s,       &row.total_s,       &row.bytes_sent,
        &row.bytes_received, &row.density,       &row.overlapped_communicate_s};
    if (present[2 * j + 1] == 0) {
      throw std::runtime_error(fmt::format(
          "every loss of steps up to {} was non-finite on every rank: the model diverged, and "
          "--on-nonfinite skip-step cannot go on without one good batch",
          row.step));
    }
    row.loss = {sums[j * kFields] / present[2 * j + 1], maxima[j * kFields]};
    for (std::size_t i = 1; i < kFields; ++i) {
      *stats[i] = {sums[j * kFields + i] / present[2 * j], maxima[j * kFields + i]};
    }
  }
  return rows;
}

}  // namespace commsgd::trainer
