// Convergence of the gossip family on real data (the digits set), each run a real mpirun launch
// of commsgd-train; the consensus-average model is what is evaluated.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using GossipTraining = TrainerRuns;

TEST_F(GossipTraining, SgpOsgpDpsgdMatchDenseOnDigits) {
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
                           "on s.run_id = r.id where r.algo in ('sgp', 'osgp', 'dpsgd')");
  EXPECT_EQ(waits[0][0], "1");
  EXPECT_GT(std::stoi(waits[0][1]), 0);
}

TEST_F(GossipTraining, BipartiteTopologyWithAnOddWorkerCountIsABadInput) {
  const ProcessResult r = train(3, {"--algo", "dpsgd", "--db-dir", dir_.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("even number of workers (got 3)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace commsgd::testing
