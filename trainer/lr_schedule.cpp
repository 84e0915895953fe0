#include "trainer/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace commsgd::trainer {
LrSchedule::LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs,
                       double warmup_start_fraction, long update_every)
    : base_lr_(base_lr),
      milestones_(std::move(milestones)),
      warmup_epochs_(warmup_epochs),
      warmup_start_fraction_(warmup_start_fraction),
      update_every_(std::max(1L, update_every)) {}

double LrSchedule::lr(int epoch, long iteration, long iterations_per_epoch) const {
  // Held since the last update: the first iteration of this block of the epoch.
  const long in_epoch = std::max(0L, iteration - epoch * iterations_per_epoch);
  iteration -= in_epoch % update_every_;
  double lr = base_lr_;
  for (const Milestone& m : milestones_) {
    if (epoch >= m.epoch) lr *= m.value;
  }
  const double warmup_iterations = warmup_epochs_ * static_cast<double>(iterations_per_epoch);
  const auto t = static_cast<double>(iteration);
  if (warmup_iterations > 0 && t < warmup_iterations) {
    const double f = warmup_start_fraction_;
    lr *= f > 0 ? f + (1 - f) * t / warmup_iterations : (t + 1) / std::ceil(warmup_iterations);
  }
  return lr;
}

}  // namespace commsgd::trainer
