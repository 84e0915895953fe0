#include <gtest/gtest.h>

#include "trainer/lr_schedule.hpp"

namespace commsgd::trainer {
namespace {

TEST(LrSchedule, StepDecayAtMilestones) {
  const LrSchedule s(0.1, algorithms::parse_epoch_values("81:0.1,122:0.1"), 0);
  EXPECT_DOUBLE_EQ(s.lr(0, 0, 100), 0.1);
  EXPECT_DOUBLE_EQ(s.lr(80, 8099, 100), 0.1);
  EXPECT_NEAR(s.lr(81, 8100, 100), 0.01, 1e-15);
  EXPECT_NEAR(s.lr(121, 12199, 100), 0.01, 1e-15);
  EXPECT_NEAR(s.lr(122, 12200, 100), 0.001, 1e-15);
}

TEST(LrSchedule, LinearWarmupPerIterationThenBase) {
  const LrSchedule s(0.4, {}, 2);  // 2 epochs of 10 iterations
  EXPECT_NEAR(s.lr(0, 0, 10), 0.4 / 20, 1e-15);
  EXPECT_NEAR(s.lr(0, 9, 10), 0.4 * 10 / 20, 1e-15);
  EXPECT_NEAR(s.lr(1, 19, 10), 0.4, 1e-15);
  EXPECT_DOUBLE_EQ(s.lr(2, 20, 10), 0.4);
  for (long t = 1; t < 20; ++t)
    EXPECT_GT(s.lr(int(t / 10), t, 10), s.lr(int((t - 1) / 10), t - 1, 10));
}

// The gTop-k code's warm-up (dl_trainer.py, _adjust_learning_rate_general): min_lr = lr/P, then
// lr = min_lr + (lr − min_lr)/(10·batches per epoch)·t for t = 0, 1, ...: exactly lr/P at the
// first iteration and lr once the warm-up is over.
TEST(LrSchedule, WarmupFromLrOverWorkers) {
  const int workers = 4;
  const LrSchedule s(0.1, algorithms::parse_epoch_values("81:0.1"), 10, 1.0 / workers);
  const long per_epoch = 390;
  EXPECT_DOUBLE_EQ(s.lr(0, 0, per_epoch), 0.1 / workers);
  const double min_lr = 0.1 / workers;
  for (const long t : {1L, 389L, 1000L, 3899L}) {
    EXPECT_NEAR(s.lr(static_cast<int>(t / per_epoch), t, per_epoch),
                min_lr + (0.1 - min_lr) / (10.0 * per_epoch) * static_cast<double>(t), 1e-15)
        << t;
  }
  EXPECT_DOUBLE_EQ(s.lr(10, 3900, per_epoch), 0.1);
  EXPECT_NEAR(s.lr(81, 81 * per_epoch, per_epoch), 0.01, 1e-15);
  // One worker: no warm-up at all, as in the original (min_lr = lr).
  const LrSchedule alone(0.1, {}, 10, 1.0);
  EXPECT_DOUBLE_EQ(alone.lr(0, 0, per_epoch), 0.1);
}

// The SGP code recomputes the lr when i % 100 == 0 (i: the iteration within the epoch) and holds
// it in between, so during the warm-up it rises in steps that restart at every epoch.
TEST(LrSchedule, RecomputedEveryNIterationsOfAnEpoch) {
  const long per_epoch = 250;
  const LrSchedule every(0.4, algorithms::parse_epoch_values("30:0.1"), 5, 0.25);
  const LrSchedule held(0.4, algorithms::parse_epoch_values("30:0.1"), 5, 0.25, 100);
  for (const long t : {0L, 37L, 99L, 100L, 199L, 249L, 250L, 251L, 349L, 350L, 1249L, 1250L}) {
    const int epoch = static_cast<int>(t / per_epoch);
    const long block_start = epoch * per_epoch + (t % per_epoch) / 100 * 100;
    EXPECT_DOUBLE_EQ(held.lr(epoch, t, per_epoch), every.lr(epoch, block_start, per_epoch)) << t;
  }
  EXPECT_LT(held.lr(0, 99, per_epoch), every.lr(0, 99, per_epoch));
  EXPECT_DOUBLE_EQ(held.lr(0, 250 - 1, per_epoch), every.lr(0, 200, per_epoch));
  EXPECT_NEAR(held.lr(30, 30 * per_epoch + 50, per_epoch), 0.04, 1e-15);
}

TEST(LrSchedule, ParsesAndRejects) {
  EXPECT_TRUE(algorithms::parse_epoch_values("").empty());
  const auto m = algorithms::parse_epoch_values("30:0.1,60:0.5");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].epoch, 60);
  EXPECT_DOUBLE_EQ(m[1].value, 0.5);
  for (const char* bad : {"30", "30:", ":0.1", "x:0.1", "30:0.1,20:0.1", "30:0", "30:-1", "-1:0.1",
                          "30:0.1,", "30:0.1;60:0.1", "30:nan"}) {
    EXPECT_THROW(algorithms::parse_epoch_values(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace commsgd::trainer
