#include "trainer/lr_schedule.hpp"

#include <cmath>

namespace commsgd::trainer {
LrSchedule::LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs)
    : base_lr_(base_lr), milestones_(std::move(milestones)), warmup_epochs_(warmup_epochs) {}

double LrSchedule::lr(int epoch, long iteration, long iterations_per_epoch) const {
  double lr = base_lr_;
  for (const Milestone& m : milestones_) {
    if (epoch >= m.epoch) lr *= m.value;
  }
  const double warmup_iterations = warmup_epochs_ * static_cast<double>(iterations_per_epoch);
  if (warmup_iterations > 0 && static_cast<double>(iteration) < warmup_iterations) {
    lr *= static_cast<double>(iteration + 1) / std::ceil(warmup_iterations);
  }
  return lr;
}

}  // namespace commsgd::trainer
