// Sixteen runs finishing at once into one shared database (WAL, busy timeout, transactions):
// every run row arrives, completed, and no writer gives up on a locked database.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using ConcurrentRuns = TrainerRuns;

TEST_F(ConcurrentRuns, SixteenWritersToOneDatabaseLoseNothing) {
  const std::string db = (dir_ / "shared.sqlite").string();
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);  // singletons started by root, as in CI
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  std::vector<std::unique_ptr<Process>> runs;
  for (int i = 0; i < 16; ++i) {
    runs.push_back(std::make_unique<Process>(
        std::vector<std::string>{COMMSGD_TRAIN, "--max-steps", "20", "--epochs", "2", "--log-every",
                                 "1", "--seed", std::to_string(i + 1), "--quiet", "--db", db}));
  }
  for (auto& run : runs) {
    const ProcessResult r = run->wait(std::chrono::seconds(300));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("locked"), std::string::npos) << r.output;
  }
  EXPECT_EQ(query(db, "select count(*) from runs where status = 'completed'")[0][0], "16");
  EXPECT_EQ(query(db, "select count(distinct seed) from runs")[0][0], "16");
  EXPECT_EQ(query(db, "select count(*) from steps")[0][0], std::to_string(16 * 20));
}

}  // namespace
}  // namespace commsgd::testing
