// NaN and Inf (--on-nonfinite): a batch whose loss is not finite stops the run as `failed` with a
// message that says so (the default), or with skip-step is left out while training goes on; the
// failing rank's message reaches the row through rank 0. The
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

// The run of `db` failed with rank 3's non-finite loss, whatever rank 0 saw after it.
::testing::AssertionResult FailedWithRank3sReason(const fs::path& db) {
  const auto runs = query(db, "select status, exit_reason from runs");
  if (runs.size() != 1) return ::testing::AssertionFailure() << runs.size() << " runs";
  if (runs[0][0] != "failed" || runs[0][1].rfind("rank 3: non-finite loss at iteration", 0) != 0)
    return ::testing::AssertionFailure() << runs[0][0] << ": " << runs[0][1];
  return ::testing::AssertionSuccess() << runs[0][1];
}

// With this seed the bad sample is in rank 3's first batches: rank 3 records its own error
// before the job is ended, and rank 0's record of the SIGTERM that follows does not replace it.
TEST_F(NonFinite, ANonFiniteLossStopsTheRunAsFailedByDefault) {
  const fs::path db = dir_ / "stop.sqlite";
  const ProcessResult run =
      train(4, with(poisoned_run("dense", write_poisoned_csv(dir_), db), {"--seed", "2"}));
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_TRUE(FailedWithRank3sReason(db));
  EXPECT_NE(query(db, "select exit_reason from runs")[0][0].find("--on-nonfinite"),
            std::string::npos);
}

// Only rank 0's host may open the run database (on a cluster it lies on a network file system):
// ranks 1-3 run under strace, and the one that fails (rank 3, as above) hands its failure over in
// a file beside the database, which rank 0 folds into the row and removes.
TEST_F(NonFinite, ARankThatFailsLeavesTheDatabaseToRankZero) {
  const fs::path db = dir_ / "stop.sqlite", traces = dir_ / "traces";
  fs::create_directories(traces);
  std::vector<std::string> args =
      with(poisoned_run("dense", write_poisoned_csv(dir_), db), {"--seed", "2", "--quiet"});
  std::vector<std::string> argv = mpirun_base();
  argv.insert(argv.end(), {"-np", "1", COMMSGD_TRAIN});
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(),
              {":", "-np", "3", "strace", "-f", "-ff", "-qq", "-e",
               "trace=open,openat,openat2,creat", "-o", (traces / "rank").string(), COMMSGD_TRAIN});
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult run = run_process(argv, std::chrono::seconds(300));
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;

  EXPECT_TRUE(FailedWithRank3sReason(db));
  EXPECT_FALSE(fs::exists(dir_ / "stop.sqlite.peer-failures")) << "not folded";

  // Every file the traced ranks opened: the database (or its -wal, -shm, -journal) never; the
  // failure file rank 3 wrote, which shows that the traces see what the ranks open.
  const std::string database = "\"" + db.string();
  bool handed_over = false;
  int files = 0;
  for (const fs::directory_entry& trace : fs::directory_iterator(traces)) {
    ++files;
    std::ifstream in(trace.path());
    for (std::string line; std::getline(in, line);) {
      const std::size_t at = line.find(database);
      if (at == std::string::npos) continue;
      const char next = line[at + database.size()];
      EXPECT_TRUE(next != '"' && next != '-') << trace.path().filename() << ": " << line;
      handed_over |= line.find(".peer-failures/") != std::string::npos &&
                     line.find(".rank3.part\"") != std::string::npos;
    }
  }
  EXPECT_GE(files, 3);
  EXPECT_TRUE(handed_over) << "no trace shows rank 3 writing its failure beside the database";
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
