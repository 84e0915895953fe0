// analysis/views.sql on the hand-made database: every view against numbers derived by hand in
// handmade_db.cpp, and how the views are installed (persistent at every open; TEMP for reading).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>

#include "analysis/record/run_database.hpp"
#include "analysis/record/views.hpp"
#include "tests/report/handmade_db.hpp"
#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using R = HandmadeRuns;

class Views : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_directory("views");
    db_ = dir_ / "handmade.sqlite";
    write_handmade_database(db_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  json q(const std::string& sql) { return query_json(db_, sql); }
  // One column of a view, by run id.
  std::map<std::string, json> column(const std::string& view, const std::string& name) {
    std::map<std::string, json> values;
    for (const json& row : q("SELECT run_id, " + name + " AS v FROM " + view))
      values[row["run_id"]] = row["v"];
    return values;
  }

  fs::path dir_, db_;
};

TEST_F(Views, ThroughputIsSamplesPerSecondOverTheStepsAfterTheFirstWindow) {
  const auto samples = column("throughput", "samples_per_s");
  EXPECT_DOUBLE_EQ(samples.at(R::dense1), 100);
  EXPECT_DOUBLE_EQ(samples.at(R::topk1), 50);
  EXPECT_NEAR(samples.at(R::dense4), 160, 1e-9);
  EXPECT_DOUBLE_EQ(samples.at(R::topk4), 320);
  EXPECT_DOUBLE_EQ(samples.at(R::gtopk2), 40) << "a single window is its own steady state";
  const auto windows = column("throughput", "windows");
  EXPECT_EQ(windows.at(R::dense4), 2);
  EXPECT_EQ(windows.at(R::gtopk2), 1);
  EXPECT_NEAR(column("throughput", "step_s").at(R::dense4), 0.25, 1e-12);
}

TEST_F(Views, ScalingEfficiencyIsOverWorkersTimesTheDenseSingleWorkerThroughput) {
  const auto efficiency = column("scaling_efficiency", "scaling_efficiency");
  EXPECT_DOUBLE_EQ(efficiency.at(R::dense1), 1.0);
  EXPECT_DOUBLE_EQ(efficiency.at(R::topk1), 0.5);
  EXPECT_NEAR(efficiency.at(R::dense4), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(efficiency.at(R::topk4), 0.8);
  EXPECT_TRUE(efficiency.at(R::gtopk2).is_null()) << "no 1-worker run on network eth";
  EXPECT_DOUBLE_EQ(column("scaling_efficiency", "baseline_samples_per_s").at(R::topk4), 100);
  EXPECT_EQ(column("scaling_efficiency", "baseline_runs").at(R::topk4), 1);
}

TEST_F(Views, ScalingBaselineFallsBackToAnyAlgorithmWithoutADenseRun) {
  {
    record::RunDatabase db(db_);  // foreign keys on: the run's rows go with it
    ASSERT_EQ(sqlite3_exec(db.handle(), "DELETE FROM runs WHERE algo = 'dense' AND workers = 1",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  const auto efficiency = column("scaling_efficiency", "scaling_efficiency");
  EXPECT_DOUBLE_EQ(efficiency.at(R::topk4), 320.0 / (4 * 50));
  EXPECT_NEAR(efficiency.at(R::dense4), 160.0 / (4 * 50), 1e-12);
}

TEST_F(Views, TimeBreakdownHasMeanSecondsPerPhaseAndShares) {
  const json row =
      q(std::string("SELECT * FROM time_breakdown WHERE run_id = '") + R::dense4 + "'").at(0);
  EXPECT_NEAR(row["data_s"], 0.01, 1e-12);
  EXPECT_NEAR(row["forward_backward_s"], 0.05, 1e-12);
  EXPECT_NEAR(row["select_s"], 0.0, 1e-12);
  EXPECT_NEAR(row["communicate_s"], 0.1, 1e-12);
  EXPECT_NEAR(row["wait_s"], 0.02, 1e-12);
  EXPECT_NEAR(row["update_s"], 0.01, 1e-12);
  EXPECT_NEAR(row["other_s"], 0.06, 1e-12);
  EXPECT_NEAR(row["total_s"], 0.25, 1e-12);
  EXPECT_NEAR(row["communicate_share"], 0.4, 1e-12);
  EXPECT_NEAR(row["other_share"], 0.24, 1e-12);
}

TEST_F(Views, TimeToAccuracyHasEachNewBestEpoch) {
  const json rows = q(std::string("SELECT epoch, wall_seconds, val_top1 FROM time_to_accuracy "
                                  "WHERE run_id = '") +
                      R::dense1 + "' ORDER BY epoch");
  EXPECT_EQ(rows, json::parse(R"([{"epoch": 0, "wall_seconds": 10.0, "val_top1": 0.5},
                                  {"epoch": 1, "wall_seconds": 20.0, "val_top1": 0.7}])"));
  const json reached =
      q("SELECT run_id, min(wall_seconds) AS s FROM time_to_accuracy WHERE val_top1 >= 0.65 "
        "GROUP BY run_id ORDER BY run_id");
  EXPECT_EQ(
      reached,
      json::parse(std::string(R"([{"run_id": ")") + R::dense1 + R"(", "s": 20.0}, {"run_id": ")" +
                  R::dense4 + R"(", "s": 24.0}, {"run_id": ")" + R::topk4 + R"(", "s": 10.0}])"));
}

TEST_F(Views, FinalMetricsAreTheLastEpochAndTheBest) {
  const json row =
      q(std::string("SELECT * FROM final_metrics WHERE run_id = '") + R::dense1 + "'").at(0);
  EXPECT_EQ(row["epochs_done"], 3);
  EXPECT_EQ(row["final_epoch"], 2);
  EXPECT_DOUBLE_EQ(row["final_val_top1"], 0.6);
  EXPECT_DOUBLE_EQ(row["best_val_top1"], 0.7);
  EXPECT_EQ(row["best_epoch"], 1);
  EXPECT_DOUBLE_EQ(row["best_val_loss"], 2.0 - 0.7);
  EXPECT_DOUBLE_EQ(row["wall_seconds"], 30);
  EXPECT_TRUE(row["best_val_perplexity"].is_null());
}

TEST_F(Views, CommunicationVolumeIsPerStepOverAllWindows) {
  const json row =
      q(std::string("SELECT * FROM communication_volume WHERE run_id = '") + R::dense4 + "'").at(0);
  EXPECT_DOUBLE_EQ(row["bytes_sent_per_step"], 1000);
  EXPECT_DOUBLE_EQ(row["bytes_sent_max_per_step"], 2000);
  EXPECT_DOUBLE_EQ(row["bytes_received_per_step"], 3000);
  EXPECT_DOUBLE_EQ(row["bytes_received_max_per_step"], 4000);
  EXPECT_EQ(row["windows"], 3);
}

TEST_F(Views, RunSummaryHasOneRowPerRunEvenWithoutEpochs) {
  const auto summary = by(q("SELECT * FROM run_summary"), "run_id");
  ASSERT_EQ(summary.size(), 5u);
  EXPECT_DOUBLE_EQ(summary.at(R::topk4)["samples_per_s"], 320);
  EXPECT_DOUBLE_EQ(summary.at(R::topk4)["scaling_efficiency"], 0.8);
  EXPECT_DOUBLE_EQ(summary.at(R::topk4)["final_val_top1"], 0.9);
  EXPECT_DOUBLE_EQ(summary.at(R::topk4)["bytes_sent_per_step"], 10);
  EXPECT_TRUE(summary.at(R::gtopk2)["final_val_top1"].is_null());
  EXPECT_DOUBLE_EQ(summary.at(R::gtopk2)["samples_per_s"], 40);
}

TEST_F(Views, OpeningADatabaseReplacesStaleViewsWithoutChangingItsVersion) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "DROP VIEW run_summary; DROP VIEW throughput; "
                         "CREATE VIEW throughput AS SELECT 1 AS stale",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  record::RunDatabase db(db_);
  EXPECT_EQ(db.schema_version(), record::RunDatabase::kSchemaVersion);
  EXPECT_DOUBLE_EQ(column("throughput", "samples_per_s").at(R::topk4), 320);
  EXPECT_EQ(q("SELECT count(*) AS n FROM run_summary").at(0)["n"], 5);
}

TEST_F(Views, TemporaryViewsWorkOnAReadOnlyConnectionAndLeaveTheFileAsItWas) {
  {
    record::RunDatabase db(db_);  // a file without views, as one from before views.sql
    ASSERT_EQ(sqlite3_exec(db.handle(),
                           "DROP VIEW run_summary; DROP VIEW run_memory; "
                           "DROP VIEW communication_volume; "
                           "DROP VIEW final_metrics; DROP VIEW time_to_accuracy; "
                           "DROP VIEW time_breakdown; DROP VIEW scaling_efficiency; "
                           "DROP VIEW throughput; DROP VIEW steady_steps",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  const auto bytes = [&] {
    std::ifstream in(db_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  record::install_views(raw, db_.string(), record::ViewScope::temporary);
  record::install_views(raw, db_.string(), record::ViewScope::temporary);  // again: replaced
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT count(*) FROM run_summary", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 5);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  EXPECT_EQ(bytes(), before);
  EXPECT_EQ(
      query_json(db_, "SELECT count(*) AS n FROM sqlite_master WHERE type = 'view'").at(0)["n"], 0);
}

}  // namespace
}  // namespace commsgd::testing
