// NaN and Inf (--on-nonfinite): a batch whose loss is not finite stops the run as `failed` with a
// message that says so (the default), or with skip-step is left out while training goes on. The
// bad batch is real: a data file with one sample at the float limit, which the mlp's first layers
// overflow. A model that has diverged (every loss non-finite) fails even with skip-step.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

// 400 rows of 64 features, class 1 when their sum is positive; the first row is at the float
// limit. The last quarter (validation, --val-split tail) is clean.
fs::path write_poisoned_csv(const fs::path& dir) {
  const fs::path file = dir / "poisoned.csv";
  std::ofstream out(file);
  for (int i = 0; i < 64; ++i) out << "3.4e38,";
  out << "1\n";
  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  for (int row = 1; row < 400; ++row) {
    float sum = 0;
    for (int i = 0; i < 64; ++i) {
      const float x = normal(random);
      sum += x;
      out << x << ',';
    }
    out << (sum > 0 ? 1 : 0) << '\n';
  }
  return file;
}

std::vector<std::string> poisoned_run(const std::string& algo, const fs::path& data,
                                      const fs::path& db) {
  return {"--algo",
          algo,
          "--density",
          "0.05",
          "--dataset",
          "csv",
          "--data-path",
          data.string(),
          "--val-fraction",
          "0.25",
          "--val-split",
          "tail",
          "--no-normalize",
          "--model",
          "mlp",
          "--batch-size",
          "8",
          "--epochs",
          "3",
          "--log-every",
          "5",
          "--db",
          db.string()};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

using NonFinite = TrainerRuns;

// With this seed the bad sample is in rank 3's first batches: rank 3 records its own error
// before the job is ended, and rank 0's record of the SIGTERM that follows does not replace it.
TEST_F(NonFinite, ANonFiniteLossStopsTheRunAsFailedByDefault) {
  const fs::path db = dir_ / "stop.sqlite";
  const ProcessResult run =
      train(4, with(poisoned_run("dense", write_poisoned_csv(dir_), db), {"--seed", "2"}));
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  const auto runs = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "failed");
  EXPECT_EQ(runs[0][1].rfind("rank 3: non-finite loss at iteration", 0), 0u) << runs[0][1];
  EXPECT_NE(runs[0][1].find("--on-nonfinite"), std::string::npos) << runs[0][1];
}

class SkipStep : public TrainerRuns, public ::testing::WithParamInterface<std::string> {};

// The bad sample is in some rank's batch once per epoch: 3 batches left out, the run completes,
// every recorded loss is finite and the model still learns the task (chance is 50%).
TEST_P(SkipStep, ABadBatchIsLeftOutAndTrainingGoesOn) {
  const fs::path db = dir_ / "skip.sqlite";
  const ProcessResult run = train(2, with(poisoned_run(GetParam(), write_poisoned_csv(dir_), db),
                                          {"--on-nonfinite", "skip-step"}));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("this rank's batch is left out"), std::string::npos) << run.output;
  const auto runs = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "completed");
  EXPECT_EQ(runs[0][1],
            "3 batches or updates with non-finite values left out "
            "(--on-nonfinite skip-step)");
  // SQLite stores NaN as NULL: a NaN that slipped through would show as a missing value.
  const auto steps = query(db,
                           "select count(*), count(loss_mean), count(loss_max), max(loss_max) "
                           "from steps");
  EXPECT_EQ(steps[0][0], steps[0][1]);
  EXPECT_EQ(steps[0][0], steps[0][2]);
  EXPECT_LT(std::stod(steps[0][3]), 10.0);
  const auto last =
      query(db, "select val_top1, train_loss from epochs order by epoch desc limit 1");
  EXPECT_GT(std::stod(last[0][0]), 0.7);
}

INSTANTIATE_TEST_SUITE_P(SynchronousAndGossip, SkipStep,
                         ::testing::Values("dense", "gtopk", "sgp"));

// With every loss non-finite there is nothing to skip to: the run fails and says why.
TEST_F(NonFinite, ADivergedModelFailsEvenWithSkipStep) {
  const fs::path db = dir_ / "diverged.sqlite";
  const ProcessResult run =
      train(2, {"--algo", "topk", "--density", "0.01", "--lr", "1e30", "--max-steps", "50",
                "--log-every", "5", "--on-nonfinite", "skip-step", "--db", db.string()});
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  const auto runs = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "failed");
  EXPECT_NE(runs[0][1].find("the model diverged"), std::string::npos) << runs[0][1];
}

}  // namespace
}  // namespace commsgd::testing
