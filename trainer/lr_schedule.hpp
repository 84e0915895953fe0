#pragma once

#include <vector>

#include "algorithms/epoch_schedule.hpp"

namespace commsgd::trainer {

// Learning rate as a function of training progress:
//   lr(epoch, t) = base · Π{factor_i : epoch ≥ epoch_i} · warm-up(t)
// The warm-up lasts the first `warmup_epochs` epochs, W iterations, and is linear per iteration
// t = 0, 1, ... in one of two ways:
//   from zero (Goyal et al.):      warm-up(t) = (t + 1) / W
//   from a fraction f of the base: warm-up(t) = f + (1 − f) · t / W; the gTop-k code's warm-up
//                                  with f = 1/P (dl_trainer.py, _adjust_learning_rate_general).
// After it, warm-up(t) = 1. With `update_every` N > 1 the lr is recomputed only at every N-th
// iteration of an epoch (blocks restart at each epoch) and held in between, as the SGP code does
// with N = 100 (gossip_sgd.py: update_learning_rate when i % 100 == 0).
class LrSchedule {
 public:
  // From `epoch` on, the lr is multiplied by `value` (on top of earlier milestones).
  using Milestone = algorithms::EpochValue;

  // warmup_start_fraction: 0 for the warm-up from zero, else f in (0, 1].
  LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs,
             double warmup_start_fraction = 0, long update_every = 1);

  // iteration counts from 0 at the start of training; epoch from 0.
  double lr(int epoch, long iteration, long iterations_per_epoch) const;

  const std::vector<Milestone>& milestones() const { return milestones_; }

 private:
  double base_lr_;
  std::vector<Milestone> milestones_;
  double warmup_epochs_;
  double warmup_start_fraction_;
  long update_every_;
};

}  // namespace commsgd::trainer
