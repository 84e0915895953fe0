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
