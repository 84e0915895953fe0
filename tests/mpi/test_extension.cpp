// "Adding an algorithm is one new file and one row" (docs/design.md): the test-only algorithm of
// tests/extension/model_averaging.cpp, that file and nothing else, trains under mpirun as any
// built-in one does, and is recorded under its name.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace commsgd::testing
