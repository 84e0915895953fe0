// Convergence of the gossip family on real data (the digits set), each run a real mpirun launch
// of commsgd-train; the consensus-average model is what is evaluated.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using GossipTraining = TrainerRuns;

TEST_F(GossipTraining, SgpOsgpDpsgdAdpsgdMatchDenseOnDigits) {
  const std::string db = (dir_ / "digits.sqlite").string();
  const std::vector<std::string> digits = digits_mlp_flags(db);
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

// --eval-model local: every rank scores its own model on the whole validation set and the scores
// are averaged. Where every rank holds the same model (dense) that is the consensus score exactly,
// epoch by epoch; a gossip run's consensus distance is recorded all the same.
TEST_F(GossipTraining, EvalModelLocalAveragesEachRanksScoreOnTheWholeSet) {
  const std::string db = (dir_ / "local.sqlite").string();
  std::vector<std::string> digits = digits_mlp_flags(db);
  *std::next(std::find(digits.begin(), digits.end(), "--epochs")) = "3";
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--algo", "dense"},
                                                {"--algo", "dense", "--eval-model", "local"},
                                                {"--algo", "sgp", "--eval-model", "local"}}) {
    std::vector<std::string> args = digits;
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult r = train(2, args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto epochs = query(db,
                            "select e.epoch, e.val_top1, e.val_loss, e.consensus_distance from "
                            "epochs e join runs r on r.id = e.run_id order by r.rowid, e.epoch");
  ASSERT_EQ(epochs.size(), 9u);
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(epochs[e][1], epochs[3 + e][1]) << "epoch " << e << ": top-1";
    EXPECT_NEAR(std::stod(epochs[e][2]), std::stod(epochs[3 + e][2]),
                1e-5 * std::stod(epochs[e][2]))
        << "epoch " << e << ": loss";
    EXPECT_NE(epochs[6 + e][3], "NULL") << "epoch " << e << ": sgp's consensus distance";
  }
  EXPECT_EQ(query(db, "select json_extract(config, '$.eval_model') from runs order by rowid")[2][0],
            "local");
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
  // What the training thread spent on the exchange: sgp exchanges on it (communicate_s), osgp
  // waits for its engine's exchange (wait_s).
  const auto rows = query(db,
                          "select r.algo, avg(s.communicate_s_mean + s.wait_s_mean) from runs r "
                          "join steps s on s.run_id = r.id group by r.algo order by r.algo");
  ASSERT_EQ(rows.size(), 2u);
  const double osgp = std::stod(rows[0][1]), sgp = std::stod(rows[1][1]);
  std::cout << "training's time on the exchange per step: sgp " << sgp << " s, osgp " << osgp
            << " s\n";
  EXPECT_LT(osgp, 0.5 * sgp);
}

TEST_F(GossipTraining, BipartiteTopologyWithAnOddWorkerCountIsABadInput) {
  const ProcessResult r = train(3, {"--algo", "dpsgd", "--db-dir", dir_.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("even number of workers (got 3)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace commsgd::testing
