// Convergence of the gossip family on real data (the digits set), each run a real mpirun launch
// of commsgd-train; the consensus-average model is what is evaluated.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using GossipTraining = TrainerRuns;

TEST_F(GossipTraining, SgpOsgpDpsgdAdpsgdMatchDenseOnDigits) {
  const std::string db = (dir_ / "digits.sqlite").string();
  const std::vector<std::string> digits = {"--dataset",    "csv", "--data-path", COMMSGD_DIGITS_CSV,
                                           "--model",      "mlp", "--epochs",    "12",
                                           "--batch-size", "16",  "--lr",        "0.05",
                                           "--db",         db};
  const std::vector<std::pair<int, std::string>> runs = {{4, "dense"}, {4, "sgp"},   {4, "osgp"},
                                                         {4, "dpsgd"}, {6, "dense"}, {6, "sgp"}};
  for (const auto& [ranks, algo] : runs) {
    std::vector<std::string> args = digits;
    args.insert(args.end(), {"--algo", algo});
    const ProcessResult r = train(ranks, args);
    ASSERT_EQ(r.exit_code, 0) << algo << " on " << ranks << "\n" << r.output;
  }
  const auto rows = query(db,
                          "select r.workers, r.algo, r.topology, e.val_top1, "
                          "e.consensus_distance, r.status from runs r join epochs e "
                          "on e.run_id = r.id and e.epoch = 11");
  ASSERT_EQ(rows.size(), runs.size());
  std::map<std::pair<std::string, std::string>, double> accuracy;
  for (const auto& row : rows) {
    EXPECT_EQ(row[5], "completed");
    accuracy[{row[0], row[1]}] = std::stod(row[3]);
    if (row[1] == "dense") {
      EXPECT_EQ(row[4], "NULL") << "no consensus distance for a synchronous run";
    } else {
      EXPECT_NE(row[2], "") << "the topology is recorded";
      EXPECT_GE(std::stod(row[4]), 0.0);
      EXPECT_LT(std::stod(row[4]), 0.1) << row[1] << ": the ranks' models agree";
    }
  }
  for (const auto& [ranks, algo] : runs) {
    const double dense = accuracy.at({std::to_string(ranks), "dense"});
    EXPECT_GE(dense, 0.95);
    EXPECT_GE(accuracy.at({std::to_string(ranks), algo}), dense - 0.02) << algo << " P=" << ranks;
  }
  // Gossip waits are recorded per step, apart from communication time.
  const auto waits = query(db,
                           "select min(wait_s_mean >= 0), count(*) from steps s join runs r "
                           "on s.run_id = r.id where r.algo in ('sgp', 'osgp', 'dpsgd', 'adpsgd')");
  EXPECT_EQ(waits[0][0], "1");
  EXPECT_GT(std::stoi(waits[0][1]), 0);
}

// On a slow link (emulated: every transfer takes its bytes / 1 Gbit/s) sgp waits for each mixing
// exchange, while osgp's communication thread runs it during the next iteration's computation.
// Both runs stay in the database. The margin is wide (measured ~20x), so machine noise cannot
// flip the verdict.
TEST_F(GossipTraining, OsgpWaitsFarLessThanSgpOnASlowLink) {
  const std::string db = (dir_ / "overlap.sqlite").string();
  for (const char* algo : {"sgp", "osgp"}) {
    const ProcessResult r =
        train(4, {"--algo", algo, "--model", "mlp", "--mlp-hidden", "512,512", "--synthetic-shape",
                  "3,16,16", "--synthetic-train", "8192", "--batch-size", "256", "--max-steps",
                  "20", "--emulate-link-mbps", "1000", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << algo << "\n" << r.output;
  }
  const auto rows = query(db,
                          "select r.algo, avg(s.wait_s_mean) from runs r join steps s "
                          "on s.run_id = r.id group by r.algo order by r.algo");
  ASSERT_EQ(rows.size(), 2u);
  const double osgp = std::stod(rows[0][1]), sgp = std::stod(rows[1][1]);
  std::cout << "mean wait per step: sgp " << sgp << " s, osgp " << osgp << " s\n";
  EXPECT_LT(osgp, 0.5 * sgp);
}

// Whether a process exists and is not a zombie (an exited child not yet reaped).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, command, state;
  return stat >> id >> command >> state && state != "Z";
}

// A rank killed mid-run (kill -9) must take the whole job down promptly, comm threads and gossip
// servers included, for the algorithms that run threads.
class KilledRank : public TrainerRuns, public ::testing::WithParamInterface<std::string> {};

TEST_P(KilledRank, EveryRankExitsNonZeroWithinAMinute) {
  const std::string db = (dir_ / "killed.sqlite").string();
  std::vector<std::string> args = {
      COMMSGD_TRAIN, "--algo",   GetParam(), "--dataset",    "synthetic", "--synthetic-train",
      "4096",        "--epochs", "1000",     "--batch-size", "8",         "--quiet",
      "--db",        db};
  Process job(mpirun(4, args));
  // Wait until training is under way: the run has recorded steps.
  const auto started = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - started < std::chrono::seconds(120)) {
    if (has_rows(db, "steps")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::vector<pid_t> ranks = job.children();
  ASSERT_EQ(ranks.size(), 4u);
  ASSERT_EQ(kill(ranks[1], SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  const ProcessResult result = job.wait(std::chrono::seconds(90));
  EXPECT_FALSE(result.timed_out) << result.output;
  EXPECT_NE(result.exit_code, 0) << result.output;
  // mpirun may return while the ranks it signalled are still on their way out.
  const auto survivors = [&] {
    return std::count_if(ranks.begin(), ranks.end(), [](pid_t rank) { return running(rank); });
  };
  while (survivors() > 0 && std::chrono::steady_clock::now() - killed < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(survivors(), 0) << "ranks still running 60 s after one was killed";
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count(), 60.0);
}

INSTANTIATE_TEST_SUITE_P(ThreadedAlgorithms, KilledRank, ::testing::Values("osgp", "adpsgd"));

TEST_F(GossipTraining, BipartiteTopologyWithAnOddWorkerCountIsABadInput) {
  const ProcessResult r = train(3, {"--algo", "dpsgd", "--db-dir", dir_.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("even number of workers (got 3)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace commsgd::testing
