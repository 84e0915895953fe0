#pragma once

#include <vector>

#include "algorithms/epoch_schedule.hpp"

namespace commsgd::trainer {

// Learning rate as a function of training progress:
//   lr(epoch, t) = base · Π{factor_i : epoch ≥ epoch_i} · warm-up(t)
// where the warm-up ramps linearly from base/iterations_per_warmup to base over the first
// `warmup_epochs` epochs (per iteration, as in Goyal et al.), then stays at 1.
class LrSchedule {
 public:
  // From `epoch` on, the lr is multiplied by `value` (on top of earlier milestones).
  using Milestone = algorithms::EpochValue;

  LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs);

  // iteration counts from 0 at the start of training; epoch from 0.
  double lr(int epoch, long iteration, long iterations_per_epoch) const;

  const std::vector<Milestone>& milestones() const { return milestones_; }

 private:
  double base_lr_;
  std::vector<Milestone> milestones_;
  double warmup_epochs_;
};

}  // namespace commsgd::trainer
