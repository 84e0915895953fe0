// kill -9 of one rank in the middle of a run, for every algorithm: the whole job must end,
// non-zero, within a minute (comm threads and gossip servers included), and the run row must
// say `failed` — rank 0 records it when mpirun terminates the survivors. And the signal Slurm
// sends before a job's time limit (sbatch --signal=USR1@T) records the run as `preempted`; a rank
// that stops answering is a stall (trainer/stall_watchdog.hpp).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

// Whether a process exists and is not a zombie (an exited child not yet reaped).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, command, state;
  return stat >> id >> command >> state && state != "Z";
}

// The MPI rank of a process Open MPI started, from its environment; -1 if unknown.
int mpi_rank_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string environment((std::istreambuf_iterator<char>(file)), {});
  const std::string key = "OMPI_COMM_WORLD_RANK=";
  const std::size_t at = environment.find(key);
  return at == std::string::npos ? -1 : std::stoi(environment.substr(at + key.size()));
}

// A 4-rank run of `algo` that would go on for a long time, started; returns once it has
// recorded steps (so it is inside the training loop).
std::unique_ptr<Process> start_long_run(const std::string& algo, const std::string& db,
                                        const std::vector<std::string>& more_options = {}) {
  std::vector<std::string> args = {COMMSGD_TRAIN, "--algo",    algo,        "--density",
                                   "0.01",        "--dataset", "synthetic", "--synthetic-train",
                                   "4096",        "--epochs",  "1000",      "--batch-size",
                                   "8",           "--quiet",   "--db",      db};
  args.insert(args.end(), more_options.begin(), more_options.end());
  auto job = std::make_unique<Process>(mpirun(4, args));
  const auto started = std::chrono::steady_clock::now();
  while (!has_rows(db, "steps") &&
         std::chrono::steady_clock::now() - started < std::chrono::seconds(120)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return job;
}

// Which of `ranks` (processes) is MPI rank `rank`; 0 if none.
pid_t rank_process(const std::vector<pid_t>& ranks, int rank) {
  const auto found =
      std::find_if(ranks.begin(), ranks.end(), [&](pid_t p) { return mpi_rank_of(p) == rank; });
  return found == ranks.end() ? 0 : *found;
}

class KilledRank : public TrainerRuns, public ::testing::WithParamInterface<std::string> {};

TEST_P(KilledRank, EveryRankExitsNonZeroWithinAMinuteAndTheRunIsFailed) {
  const std::string db = (dir_ / "killed.sqlite").string();
  const std::unique_ptr<Process> started_job = start_long_run(GetParam(), db);
  Process& job = *started_job;
  const std::vector<pid_t> ranks = job.children();
  ASSERT_EQ(ranks.size(), 4u);
  const pid_t victim = rank_process(ranks, 2);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();

  const ProcessResult result = job.wait(std::chrono::seconds(90));
  EXPECT_FALSE(result.timed_out) << result.output;
  EXPECT_NE(result.exit_code, 0) << result.output;
  // mpirun may return while the ranks it signalled are still on their way out.
  const auto survivors = [&] { return std::count_if(ranks.begin(), ranks.end(), running); };
  while (survivors() > 0 && std::chrono::steady_clock::now() - killed < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(survivors(), 0) << "ranks still running 60 s after one was killed";
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count(), 60.0);

  const auto row = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0], "failed") << row[0][1];
}

// mpirun passes SIGUSR1 on to every rank, as srun does when Slurm signals a job step.
TEST_F(TrainerRuns, TimeLimitSignalRecordsTheRunPreempted) {
  const std::string db = (dir_ / "time_limit.sqlite").string();
  const std::unique_ptr<Process> job = start_long_run("dense", db);
  ASSERT_TRUE(has_rows(db, "steps"));
  ASSERT_EQ(kill(job->pid(), SIGUSR1), 0);
  const ProcessResult result = job->wait(std::chrono::seconds(90));
  EXPECT_FALSE(result.timed_out) << result.output;
  EXPECT_NE(result.exit_code, 0) << result.output;
  const auto row = query(db, "select status, exit_reason, finished_at is not null from runs");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0], "preempted") << row[0][1];
  EXPECT_NE(row[0][1].find("SIGUSR1"), std::string::npos) << row[0][1];
  EXPECT_EQ(row[0][2], "1");
}

// A rank that stops answering but does not die (SIGSTOP: as a hung process or a host that
// freezes would): its peers wait in their next collective until the stall watchdog ends the job
// with its own exit code, after the grace it gives a launcher, and the row names the stall.
TEST_F(TrainerRuns, AStoppedRankIsAStallThatEndsTheJobWithItsExitCode) {
  const std::string db = (dir_ / "stalled.sqlite").string();
  const std::unique_ptr<Process> job = start_long_run("dense", db, {"--comm-timeout", "3"});
  ASSERT_TRUE(has_rows(db, "steps"));
  const pid_t victim = rank_process(job->children(), 2);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  const ProcessResult result = job->wait(std::chrono::seconds(120));
  kill(victim, SIGKILL);  // whatever happened, nothing stays behind stopped
  EXPECT_FALSE(result.timed_out) << result.output;
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("stalled: waited"), std::string::npos) << result.output;
  const auto row = query(db, "select status, exit_reason from runs");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][0], "failed") << row[0][1];
  EXPECT_NE(row[0][1].find("stalled: waited"), std::string::npos) << row[0][1];
  EXPECT_NE(row[0][1].find("allreduce for all 4 ranks"), std::string::npos) << row[0][1];
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, KilledRank,
                         ::testing::Values("dense", "topk", "gtopk", "gaussiank", "signsgd",
                                           "ef-signsgd", "qsgd", "powersgd", "sgp", "osgp", "dpsgd",
                                           "adpsgd"));

}  // namespace
}  // namespace commsgd::testing
