#pragma once

#include <string_view>
#include <vector>

namespace commsgd::trainer {

// Learning rate as a function of training progress:
//   lr(epoch, t) = base · Π{factor_i : epoch ≥ epoch_i} · warm-up(t)
// where the warm-up ramps linearly from base/iterations_per_warmup to base over the first
// `warmup_epochs` epochs (per iteration, as in Goyal et al.), then stays at 1.
class LrSchedule {
 public:
  struct Milestone {
    int epoch = 0;
    double factor = 1.0;
  };

  LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs);

  // iteration counts from 0 at the start of training; epoch from 0.
  double lr(int epoch, long iteration, long iterations_per_epoch) const;

  const std::vector<Milestone>& milestones() const { return milestones_; }

 private:
  double base_lr_;
  std::vector<Milestone> milestones_;
  double warmup_epochs_;
};

// Parses "81:0.1,122:0.1" (epoch:factor, epochs strictly increasing, factors > 0). An empty string
// means no milestones. Throws std::invalid_argument with a message that quotes the bad entry.
std::vector<LrSchedule::Milestone> parse_milestones(std::string_view text);

}  // namespace commsgd::trainer
