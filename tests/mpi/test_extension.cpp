// "Adding an algorithm is one new file and one row" (docs/design.md): the test-only algorithm of
// tests/extension/model_averaging.cpp, that file and nothing else, trains under mpirun as any
// built-in one does, and is recorded under its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using Extension = TrainerRuns;

TEST_F(Extension, AnAlgorithmAddedAsOneFileAndOneRowTrains) {
  const std::string db = (dir_ / "digits.sqlite").string();
  const std::vector<std::string> digits = digits_mlp_flags(db);
  for (const char* algo : {"dense", "model-averaging"}) {
    std::vector<std::string> args = digits;
    args.insert(args.end(), {"--algo", algo});
    const ProcessResult r = train_with(COMMSGD_TRAIN_EXTENDED, 4, args);
    ASSERT_EQ(r.exit_code, 0) << algo << "\n" << r.output;
  }
  const auto rows = query(db,
                          "select r.algo, r.status, e.val_top1 from runs r join epochs e "
                          "on e.run_id = r.id and e.epoch = 11 order by r.rowid");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "model-averaging");
  EXPECT_EQ(rows[1][1], "completed");
  EXPECT_GE(std::stod(rows[1][2]), std::stod(rows[0][2]) - 0.02);

  // Its row is in --help, and the plain commsgd-train does not have it.
  const ProcessResult help =
      run_process({COMMSGD_TRAIN_EXTENDED, "--help"}, std::chrono::seconds(60));
  EXPECT_NE(help.output.find("model-averaging: each rank steps alone"), std::string::npos);
  const ProcessResult plain = train(1, {"--algo", "model-averaging", "--db", db});
  EXPECT_EQ(plain.exit_code, 2) << plain.output;
}

// Neither test algorithm writes the byte counters of its stats: the record counts what their
// communicator calls moved, the allreduce's 2(P - 1)/P · 4d and the allgather's (P - 1) · 4d bytes
// a step (the communicator's count, docs/design.md "Sparse family"), P = 2 and 3.
TEST_F(Extension, TheRecordCountsTheTrafficOfAnAlgorithmThatCountsNone) {
  const std::string db = (dir_ / "traffic.sqlite").string();
  std::vector<std::string> args = digits_mlp_flags(db);
  *std::next(std::find(args.begin(), args.end(), "--epochs")) = "1";
  struct Launch {
    const char* binary;
    const char* algo;
    int workers;
  };
  for (const Launch& l : {Launch{COMMSGD_TRAIN_EXTENDED, "model-averaging", 2},
                          Launch{COMMSGD_TRAIN_ALLGATHER, "gradient-allgather", 2},
                          Launch{COMMSGD_TRAIN_ALLGATHER, "gradient-allgather", 3}}) {
    std::vector<std::string> run = args;
    run.insert(run.end(), {"--algo", l.algo});
    const ProcessResult r = train_with(l.binary, l.workers, run);
    ASSERT_EQ(r.exit_code, 0) << l.algo << "\n" << r.output;
  }
  const auto rows = query(db,
                          "select r.algo, r.workers, json_extract(r.config, '$.parameters'), "
                          "min(s.bytes_sent_mean), max(s.bytes_sent_mean), "
                          "min(s.bytes_received_mean) from runs r join steps s "
                          "on s.run_id = r.id group by r.id order by r.rowid");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    const double p = std::stod(row[1]), d = std::stod(row[2]);
    const double expected = row[0] == "model-averaging" ? 2 * (p - 1) / p * 4 * d : (p - 1) * 4 * d;
    EXPECT_NEAR(std::stod(row[3]), expected, 1) << row[0] << " P=" << row[1];
    EXPECT_NEAR(std::stod(row[4]), expected, 1) << row[0] << " P=" << row[1];
    EXPECT_NEAR(std::stod(row[5]), expected, 1) << row[0] << " P=" << row[1];
  }
}

}  // namespace
}  // namespace commsgd::testing
