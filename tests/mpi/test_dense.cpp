// Multi-rank tests of --algo dense: every case is a real mpirun launch of commsgd-train.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using DenseMpi = TrainerRuns;

// docs/design.md, "Algorithm interface": P ranks × batch b must follow the same trajectory as 1
// rank × batch P·b when the model has no batch norm (the gradient of a mean loss is the mean of the
// ranks' gradients).
class Equivalence : public TrainerRuns, public ::testing::WithParamInterface<std::string> {};

TEST_P(Equivalence, FourRanksMatchOneRankWithFourTimesTheBatch) {
  const std::vector<std::string> common = {"--algo",
                                           "dense",
                                           "--model",
                                           GetParam(),
                                           "--dataset",
                                           "synthetic",
                                           "--synthetic-train",
                                           "1024",
                                           "--max-steps",
                                           "25",
                                           "--epochs",
                                           "1",
                                           "--lr",
                                           "0.05",
                                           "--momentum",
                                           "0.9",
                                           "--weight-decay",
                                           "1e-4",
                                           "--seed",
                                           "7",
                                           "--db-dir",
                                           dir_.string()};
  auto args4 = common;
  args4.insert(args4.end(), {"--batch-size", "8", "--dump-params", (dir_ / "p4.bin").string()});
  auto args1 = common;
  args1.insert(args1.end(), {"--batch-size", "32", "--dump-params", (dir_ / "p1.bin").string()});

  const ProcessResult four = train(4, args4);
  ASSERT_EQ(four.exit_code, 0) << four.output;
  const ProcessResult one = train(1, args1);
  ASSERT_EQ(one.exit_code, 0) << one.output;

  const std::vector<float> p4 = read_floats(dir_ / "p4.bin");
  const std::vector<float> p1 = read_floats(dir_ / "p1.bin");
  ASSERT_EQ(p4.size(), p1.size());
  ASSERT_GT(p1.size(), 0u);
  EXPECT_LE(relative_distance(p4, p1), 1e-5) << "relative L2 distance of the final parameters";
}

INSTANTIATE_TEST_SUITE_P(NoBatchNorm, Equivalence, ::testing::Values("mlp", "lenet"));

// Buckets change when each part of the gradient is reduced, not what the update is: many small
// buckets reduced during backward follow the trajectory of one allreduce after backward.
TEST_F(DenseMpi, SmallBucketsFollowTheUnbucketedTrajectory) {
  const std::vector<std::string> common = {"--model",     "lenet",      "--synthetic-train", "512",
                                           "--max-steps", "20",         "--batch-size",      "16",
                                           "--db-dir",    dir_.string()};
  for (const char* bucket_mb : {"0", "0.01"}) {  // 0.01 MiB: 2621 floats, ~24 buckets of lenet
    auto args = common;
    args.insert(args.end(), {"--bucket-mb", bucket_mb, "--dump-params",
                             (dir_ / (std::string(bucket_mb) + ".bin")).string()});
    const ProcessResult run = train(3, args);
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  const std::vector<float> one = read_floats(dir_ / "0.bin");
  const std::vector<float> many = read_floats(dir_ / "0.01.bin");
  ASSERT_EQ(one.size(), many.size());
  EXPECT_LE(relative_distance(many, one), 1e-5) << "relative L2 distance of the final parameters";
}

// fp16 and bf16 on the wire: half the bytes of fp32 per step, and the digits are still learned.
class WireType : public TrainerRuns, public ::testing::WithParamInterface<std::string> {};

TEST_P(WireType, HalfTheBytesAndTheDigitsAreStillLearned) {
  const fs::path db = dir_ / "wire.sqlite";
  const ProcessResult run =
      train(4, {"--model", "mlp", "--dataset", "csv", "--data-path", COMMSGD_DIGITS_CSV, "--epochs",
                "8", "--batch-size", "16", "--lr", "0.05", "--bucket-mb", "0.05", "--wire-dtype",
                GetParam(), "--db", db.string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto last = query(db, "select val_top1 from epochs order by epoch desc limit 1");
  ASSERT_EQ(last.size(), 1u);
  EXPECT_GE(std::stod(last[0][0]), 0.93) << "held-out top-1 after 8 epochs";
  // Ring allreduce of each bucket: 2(P-1)/P of its 2-byte entries, P = 4 (±1 byte a bucket).
  const auto bytes = query(db,
                           "select min(s.bytes_sent_mean), max(s.bytes_sent_mean), "
                           "json_extract(r.config, '$.parameters') from steps s, runs r");
  const double d = std::stod(bytes[0][2]);
  EXPECT_NEAR(std::stod(bytes[0][0]), 1.5 * 2 * d, 1.0 * (d / 13107 + 1));
  EXPECT_EQ(bytes[0][0], bytes[0][1]);
}

INSTANTIATE_TEST_SUITE_P(HalfPrecision, WireType, ::testing::Values("fp16", "bf16"));

TEST_F(DenseMpi, DigitsReachNinetyFivePercentOnHeldOutSplit) {
  const fs::path db = dir_ / "digits.sqlite";
  const ProcessResult run =
      train(4, {"--algo", "dense", "--model", "mlp", "--dataset", "csv", "--data-path",
                COMMSGD_DIGITS_CSV, "--val-fraction", "0.2", "--epochs", "8", "--batch-size", "16",
                "--lr", "0.05", "--db", db.string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto runs = query(db, "select status, algo, workers, dataset from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], (std::vector<std::string>{"completed", "dense", "4", "csv"}));
  const auto last = query(db, "select val_top1 from epochs order by epoch desc limit 1");
  ASSERT_EQ(last.size(), 1u);
  EXPECT_GE(std::stod(last[0][0]), 0.95) << "held-out top-1 after 8 epochs";
  const auto epochs = query(db, "select count(*) from epochs");
  EXPECT_EQ(epochs[0][0], "8");
  // Step timings are recorded for every --log-every window, aggregated over the 4 ranks; the
  // buckets are allreduced on the engine's thread, overlapped with backward.
  const auto steps = query(db,
                           "select count(*), min(total_s_max >= total_s_mean), "
                           "min(overlapped_communicate_s_mean > 0), min(bytes_sent_mean > 0), "
                           "min(density_mean) from steps");
  EXPECT_GT(std::stoi(steps[0][0]), 0);
  EXPECT_EQ(steps[0][1], "1");
  EXPECT_EQ(steps[0][2], "1");
  EXPECT_EQ(steps[0][3], "1");
  EXPECT_EQ(std::stod(steps[0][4]), 1.0);
}

TEST_F(DenseMpi, ResNet20OnSyntheticDataIsRecorded) {
  const fs::path db = dir_ / "resnet.sqlite";
  const ProcessResult run =
      train(4, {"--algo", "dense", "--model", "resnet20", "--dataset", "synthetic",
                "--synthetic-shape", "3,16,16", "--synthetic-train", "256", "--synthetic-val", "64",
                "--batch-size", "8", "--max-steps", "4", "--db", db.string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto runs = query(db, "select status, algo, workers, model from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], (std::vector<std::string>{"completed", "dense", "4", "resnet20"}));
}

TEST_F(DenseMpi, RanksWithDifferentConfigsStopTogetherWithOneMessage) {
  std::vector<std::string> argv = mpirun_base();
  const std::vector<std::string> common = {COMMSGD_TRAIN, "--max-steps", "2",
                                           "--quiet",     "--db-dir",    dir_.string()};
  for (const char* lr : {"0.1", "0.2"}) {
    argv.insert(argv.end(), {"-np", "2"});
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), {"--lr", lr});
    if (std::string(lr) == "0.1") argv.push_back(":");
  }
  const ProcessResult run = run_process(argv, seconds(120));
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("rank 2 was started with a different configuration"), std::string::npos)
      << run.output;
  EXPECT_TRUE(fs::is_empty(dir_)) << "no database may be created";
}

TEST_F(DenseMpi, MissingDataFileIsOneClearErrorWithExitCodeTwo) {
  const fs::path missing = dir_ / "no_such_file.csv";
  const ProcessResult run = train(2, {"--dataset", "csv", "--data-path", missing.string(),
                                      "--db-dir", (dir_ / "runs").string()});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  const std::string line = "commsgd-train: error: ";
  const std::size_t at = run.output.find(line);
  ASSERT_NE(at, std::string::npos) << run.output;
  EXPECT_EQ(run.output.find(line, at + 1), std::string::npos) << "one rank reports, once";
  EXPECT_NE(run.output.find("no_such_file.csv"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "no run may be recorded";
}

// A failure after training started (here: the final parameters cannot be written, the path being
// a directory) must end every
// rank with a non-zero code and leave the run row `failed` with the reason, not `running`.
TEST_F(DenseMpi, FailureDuringTheRunIsRecordedAsFailed) {
  const fs::path db = dir_ / "failed.sqlite";
  const ProcessResult run =
      train(2, {"--max-steps", "3", "--db", db.string(), "--dump-params", dir_.string()});
  ASSERT_FALSE(run.timed_out) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  const auto runs = query(db, "select status, exit_reason, finished_at is not null from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "failed");
  EXPECT_NE(runs[0][1].find("--dump-params"), std::string::npos) << runs[0][1];
  EXPECT_EQ(runs[0][2], "1");
}

TEST_F(DenseMpi, UnknownOptionIsExitCodeTwo) {
  const ProcessResult run = train(2, {"--densty", "0.1"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--densty"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace commsgd::testing
