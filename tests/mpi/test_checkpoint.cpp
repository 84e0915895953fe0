// Checkpoint and resume: a run stopped by SIGTERM (sent to every rank, as Slurm does) at a random
// point and resumed with --resume auto must match an uninterrupted run bit for bit — every
// logged step's loss, every epoch's metrics, the final parameters — in one run row, `completed`.
// A corrupted newest checkpoint is detected by its checksum and the previous one is used; a
// checkpoint of other options is refused.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "tests/support/ptb_files.hpp"
#include "tests/support/torchscript_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 4;

// 6 epochs of 64 iterations on each of 4 ranks, a steps row every 4. "lstm": dense training of a
// language model on text the test writes beside the database; its recurrent state is part of
// what a checkpoint must restore.
std::vector<std::string> run_args(const std::string& algo, const fs::path& db,
                                  const fs::path& params) {
  std::vector<std::string> args = {COMMSGD_TRAIN,
                                   "--epochs",
                                   "6",
                                   "--log-every",
                                   "4",
                                   "--threads",
                                   "1",
                                   "--seed",
                                   "3",
                                   "--quiet",
                                   "--db",
                                   db.string(),
                                   "--dump-params",
                                   params.string()};
  if (algo == "lstm") {
    const fs::path text = db.parent_path() / "ptb";
    if (!fs::exists(text)) write_ptb_corpus(text, 740, 100);
    args.insert(args.end(),
                {"--algo",  "dense", "--dataset",        "ptb", "--data-path",       text.string(),
                 "--model", "lstm",  "--lstm-hidden",    "16",  "--lstm-dropout",    "0.2",
                 "--bptt",  "5",     "--batch-size",     "4",   "--eval-batch-size", "4",
                 "--lr",    "0.5",   "--clip-grad-norm", "0.25"});
  } else if (algo == "torchscript") {
    const fs::path cnn = db.parent_path() / "cnn.pt";
    if (!fs::exists(cnn)) {
      export_torchscript("small-cnn", cnn,
                         {"--channels", "1", "--height", "8", "--width", "8", "--classes", "10"});
    }
    args.insert(args.end(), {"--algo", "dense", "--dataset", "csv", "--data-path",
                             COMMSGD_DIGITS_CSV, "--csv-shape", "1,8,8", "--model", "torchscript",
                             "--model-file", cnn.string(), "--batch-size", "8"});
  } else {
    args.insert(args.end(), {"--algo", algo, "--density", "0.05", "--dataset", "synthetic",
                             "--synthetic-train", "2048", "--batch-size", "8"});
  }
  return args;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

long count_rows(const fs::path& db, const std::string& table) {
  if (!has_rows(db, table)) return 0;
  return std::stol(query(db, "select count(*) from " + table)[0][0]);
}

// Waits until `done()` or 120 s; true if done.
template <class Done>
bool wait_for(Done&& done) {
  const auto start = std::chrono::steady_clock::now();
  while (!done()) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// SIGTERM to every rank, as srun and Slurm's time limit deliver it; the job's end.
ProcessResult sigterm_every_rank(Process& job) {
  for (const pid_t rank : job.children()) kill(rank, SIGTERM);
  return job.wait(std::chrono::seconds(90));
}

// The job must stop at a checkpoint and record the run `preempted`.
void stop_with_sigterm(Process& job, const fs::path& db) {
  const ProcessResult stopped = sigterm_every_rank(job);
  ASSERT_FALSE(stopped.timed_out) << stopped.output;
  EXPECT_NE(stopped.exit_code, 0) << stopped.output;
  const auto row = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(row.size(), 1u);
  ASSERT_EQ(row[0][0], "preempted") << row[0][1] << "\n" << stopped.output;
}

// What must be identical between the two runs: doubles printed with 17 significant digits.
std::vector<std::vector<std::string>> record_of(const fs::path& db) {
  auto rows = query(db,
                    "select step, epoch, printf('%!.17g', loss_mean), printf('%!.17g', loss_max),"
                    " printf('%!.17g', density_mean) from steps order by step");
  for (auto& e : query(db,
                       "select epoch, printf('%!.17g', train_loss), printf('%!.17g', "
                       "train_acc), printf('%!.17g', val_loss), printf('%!.17g', val_top1) "
                       "from epochs order by epoch")) {
    rows.push_back(e);
  }
  return rows;
}

void expect_same_run(const fs::path& reference_db, const fs::path& reference_params,
                     const fs::path& resumed_db, const fs::path& resumed_params) {
  const auto runs = query(resumed_db, "select status from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "completed");
  const auto expected = record_of(reference_db);
  const auto got = record_of(resumed_db);
  ASSERT_EQ(got.size(), expected.size()) << "steps and epochs rows differ in number";
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "row " << i;
  const std::vector<float> a = read_floats(reference_params), b = read_floats(resumed_params);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
      << "final parameters differ";
}

// A reference run of the algorithm, then the same run with checkpoints, stopped by SIGTERM after
// a random number of steps rows (3 to max_rows; 6 epochs of 64 iterations, a row every 4) and
// resumed with --resume auto.
class Resume : public TrainerRuns, public ::testing::WithParamInterface<std::string> {
 protected:
  void run_stop_and_resume(long max_rows) {
    const std::string algo = GetParam();
    a_db_ = dir_ / "a.sqlite", a_params_ = dir_ / "a.bin";
    b_db_ = dir_ / "b.sqlite", b_params_ = dir_ / "b.bin";
    const ProcessResult reference =
        run_process(mpirun(kRanks, run_args(algo, a_db_, a_params_)), std::chrono::seconds(300));
    ASSERT_EQ(reference.exit_code, 0) << reference.output;

    std::mt19937 random(std::random_device{}());
    const long stop_after = std::uniform_int_distribution<long>(3, max_rows)(random);
    const std::vector<std::string> checkpointed =
        with(run_args(algo, b_db_, b_params_),
             {"--checkpoint-dir", (dir_ / "ck").string(), "--checkpoint-every-steps", "40"});
    Process job(mpirun(kRanks, checkpointed));
    ASSERT_TRUE(wait_for([&] { return count_rows(b_db_, "steps") >= stop_after; }));
    stop_with_sigterm(job, b_db_);
    RecordProperty("stopped_after_steps_rows", std::to_string(stop_after));
    epochs_at_stop_ = query(b_db_, "select epoch, printf('%!.17g', val_loss) from epochs");

    resumed_ = run_process(mpirun(kRanks, with(checkpointed, {"--resume", "auto"})),
                           std::chrono::seconds(300));
    ASSERT_EQ(resumed_.exit_code, 0) << resumed_.output;
  }

  fs::path a_db_, a_params_, b_db_, b_params_;
  std::vector<std::vector<std::string>> epochs_at_stop_;
  ProcessResult resumed_;
};

using ExactResume = Resume;

TEST_P(ExactResume, StoppedBySigtermAndResumedMatchesAnUninterruptedRunBitForBit) {
  ASSERT_NO_FATAL_FAILURE(run_stop_and_resume(60));
  expect_same_run(a_db_, a_params_, b_db_, b_params_);
}

INSTANTIATE_TEST_SUITE_P(LockstepAlgorithms, ExactResume,
                         ::testing::Values("dense", "topk", "gtopk", "gaussiank", "signsgd",
                                           "ef-signsgd", "qsgd", "powersgd", "sgp", "dpsgd", "lstm",
                                           "torchscript"));

// osgp and adpsgd cannot match bit for bit: their comm threads run on their own clocks (osgp's
// exchanges land when they land; adpsgd's ranks run different numbers of iterations). Resuming
// must still continue the same run from the checkpoint, to an accuracy like a run never stopped.
using CloseResume = Resume;

TEST_P(CloseResume, StoppedBySigtermAndResumedContinuesTheRunToTheSameAccuracy) {
  ASSERT_NO_FATAL_FAILURE(run_stop_and_resume(40));
  EXPECT_EQ(resumed_.output.find("starting from the beginning"), std::string::npos)
      << resumed_.output;
  const auto runs = query(b_db_, "select status from runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "completed");
  // The epochs recorded before the stop are kept (the run went on from a checkpoint), and
  // every epoch and step appears once, in order.
  const auto after = query(b_db_, "select epoch, printf('%!.17g', val_loss) from epochs");
  ASSERT_EQ(after.size(), 6u);
  for (std::size_t e = 0; e < after.size(); ++e) EXPECT_EQ(after[e][0], std::to_string(e));
  ASSERT_LE(epochs_at_stop_.size(), after.size());
  for (std::size_t e = 0; e + 1 < epochs_at_stop_.size(); ++e) {
    EXPECT_EQ(epochs_at_stop_[e], after[e]);
  }
  EXPECT_EQ(query(b_db_, "select count(*) - count(distinct step) from steps")[0][0], "0");
  const std::string last = "select val_top1 from epochs order by epoch desc limit 1";
  EXPECT_NEAR(std::stod(query(b_db_, last)[0][0]), std::stod(query(a_db_, last)[0][0]), 0.05);
}

INSTANTIATE_TEST_SUITE_P(CommThreadAlgorithms, CloseResume, ::testing::Values("osgp", "adpsgd"));

// A signal during the last epoch, after its last checkpoint opportunity, cannot stop the run
// before it ends: the run completes, says so, and exits 0 (the job must not be requeued).
TEST_F(TrainerRuns, SignalAfterTheLastCheckpointOpportunityLetsTheRunComplete) {
  const fs::path db = dir_ / "late.sqlite", ck = dir_ / "ck";
  // Two epochs, no steps row inside an epoch: the only checkpoint opportunity is between them,
  // and it is taken. Its files exist only once every rank has decided not to stop there. The
  // signal must land while the second epoch runs: 16384 steps (about 4 s here) leave the test's
  // poll room to be late on a slow machine. The test runs alone (tests/CMakeLists.txt): beside
  // another MPI test, that epoch outlasted the trainer's 25 s stop grace.
  const std::vector<std::string> args = {COMMSGD_TRAIN,
                                         "--algo",
                                         "dense",
                                         "--dataset",
                                         "synthetic",
                                         "--synthetic-train",
                                         "262144",
                                         "--epochs",
                                         "2",
                                         "--batch-size",
                                         "8",
                                         "--log-every",
                                         "100000",
                                         "--threads",
                                         "1",
                                         "--quiet",
                                         "--db",
                                         db.string(),
                                         "--checkpoint-dir",
                                         ck.string(),
                                         "--checkpoint-every",
                                         "1"};
  Process job(mpirun(kRanks, args));
  const auto checkpoint_files = [&] {
    long files = 0;
    if (fs::exists(ck)) {
      for (const auto& e : fs::recursive_directory_iterator(ck)) {
        files += e.path().extension() == ".ckpt" ? 1 : 0;
      }
    }
    return files;
  };
  ASSERT_TRUE(wait_for([&] { return checkpoint_files() == kRanks; }));
  const ProcessResult result = sigterm_every_rank(job);
  ASSERT_FALSE(result.timed_out) << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const auto row = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0], "completed") << row[0][1];
  EXPECT_NE(row[0][1].find("SIGTERM came after the last checkpoint opportunity"), std::string::npos)
      << row[0][1];
  EXPECT_EQ(count_rows(db, "epochs"), 2);
}

TEST_F(TrainerRuns, CorruptNewestCheckpointIsDetectedAndThePreviousOneUsed) {
  const fs::path a_db = dir_ / "a.sqlite", a_params = dir_ / "a.bin";
  const fs::path b_db = dir_ / "b.sqlite", b_params = dir_ / "b.bin", ck = dir_ / "ck";
  ASSERT_EQ(
      run_process(mpirun(kRanks, run_args("gtopk", a_db, a_params)), std::chrono::seconds(300))
          .exit_code,
      0);
  const std::vector<std::string> checkpointed =
      with(run_args("gtopk", b_db, b_params),
           {"--checkpoint-dir", ck.string(), "--checkpoint-every-steps", "8"});
  Process job(mpirun(kRanks, checkpointed));
  ASSERT_TRUE(wait_for(
      [&] { return fs::exists(ck) && std::distance(fs::directory_iterator(ck), {}) >= 2; }));
  stop_with_sigterm(job, b_db);

  // The newest checkpoint: rank 1's file cut short, rank 2's with one byte flipped.
  std::vector<fs::path> checkpoints;
  for (const auto& e : fs::directory_iterator(ck)) checkpoints.push_back(e.path());
  std::sort(checkpoints.begin(), checkpoints.end());
  ASSERT_EQ(checkpoints.size(), 2u);
  const fs::path newest = checkpoints.back();
  fs::resize_file(newest / "rank-00001.ckpt", fs::file_size(newest / "rank-00001.ckpt") / 2);
  {
    std::fstream f(newest / "rank-00002.ckpt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    const char c = static_cast<char>(f.get());
    f.seekp(200);
    f.put(static_cast<char>(c ^ 0x5a));
  }

  // Resuming with other options is refused (exit code 2), and leaves the run as it was.
  const ProcessResult other =
      run_process(mpirun(kRanks, with(checkpointed, {"--resume", "auto", "--lr", "0.2"})),
                  std::chrono::seconds(300));
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("taken with other options"), std::string::npos) << other.output;
  EXPECT_EQ(query(b_db, "select status from runs")[0][0], "preempted");

  const ProcessResult resumed = run_process(
      mpirun(kRanks, with(checkpointed, {"--resume", "auto"})), std::chrono::seconds(300));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("warning: rank 1: unusable checkpoint"), std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("checksum mismatch"), std::string::npos) << resumed.output;
  expect_same_run(a_db, a_params, b_db, b_params);
}

}  // namespace
}  // namespace commsgd::testing
