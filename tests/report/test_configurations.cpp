// The reports group runs by configuration (analysis/report/configurations.hpp): runs that differ
// only in their seed are one row, with their spread and count; runs that differ in any option that
// changes what they compute (density, batch size, topology, wire type) are rows of their own, the
// differing option a column. On a database written here through RunDatabase, with config JSON as
// commsgd-train records it.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/record/run_database.hpp"
#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class Configurations : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_directory("configurations");
    db_ = (dir_ / "runs.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A completed topk run on 4 workers whose steady step takes `step_s` (samples/s = 4 * batch /
  // step_s) and whose last epoch reaches `top1`. `options` go over the config's defaults.
  void add(const std::string& id, std::uint64_t seed, double step_s, double top1,
           json options = json::object()) {
    json config = {{"algo", "topk"},
                   {"density", 0.01},
                   {"batch_size", 10},
                   {"topology", "ring"},
                   {"wire_dtype", "fp32"},
                   {"lr", 0.1},
                   {"seed", seed},
                   {"threads", 1},
                   {"db", db_},
                   {"network_environment", {{"OMPI_MCA_ess_base_jobid", id}}},
                   {"parameters", 1000}};
    config.update(options);
    config["not_in_configuration"] = {"threads", "db", "seed", "network_environment", "parameters"};
    record::RunInfo r;
    r.id = id;
    r.algo = "topk";
    r.selector = "exact";
    r.aggregation = "allgather";
    r.topology = config["topology"];
    r.model = "mlp";
    r.dataset = "digits";
    r.workers = 4;
    r.network = "local";
    r.backend = "mpi";
    r.device = "cpu";
    r.density = config["density"].get<double>();
    r.batch_size = config["batch_size"];
    r.lr = 0.1;
    r.epochs = 1;
    r.seed = seed;
    r.config_json = config.dump();
    r.git_revision = "test";
    r.host = "test";
    record::RunDatabase db(db_);
    db.begin_run(r);
    std::vector<record::StepRow> steps;
    for (const std::int64_t step : {9, 19}) {  // the first window is warm-up
      record::StepRow s;
      s.step = step;
      s.loss = {1.0, 1.0};
      s.forward_backward_s = {step_s, step_s};
      s.total_s = {step_s, step_s};
      s.bytes_sent = {100, 100};
      s.density = {0.01, 0.01};
      steps.push_back(s);
    }
    db.add_steps(id, steps);
    record::EpochRow e;
    e.val_top1 = top1;
    e.wall_seconds = 1;
    db.add_epoch(id, e);
    db.finish_run(id, record::RunStatus::completed, "max epochs");
  }

  fs::path dir_;
  std::string db_;
};

std::string id(int n) {
  return "00000000-0000-4000-8000-" + std::string(11, '0') + std::to_string(n);
}

TEST_F(Configurations, ThreeSeedsOfOneConfigurationAreOneRowWithTheirSpread) {
  add(id(1), 1, 0.1, 0.80);  // 4 * 10 / 0.1 = 400 samples/s
  add(id(2), 2, 0.2, 0.90);  // 200
  add(id(3), 3, 0.4, 0.70);  // 100
  const json rows = report_json({"compare", db_});
  ASSERT_EQ(rows.size(), 1u) << rows.dump();
  EXPECT_EQ(rows[0]["runs"], 3);
  EXPECT_NEAR(rows[0]["samples_per_s"], 700.0 / 3, 1e-9);
  // Sample standard deviation of 400, 200 and 100.
  const double mean = 700.0 / 3;
  const double sd = std::sqrt(
      ((400 - mean) * (400 - mean) + (200 - mean) * (200 - mean) + (100 - mean) * (100 - mean)) /
      2);
  EXPECT_NEAR(rows[0]["samples_per_s_sd"], sd, 1e-9);
  EXPECT_NEAR(rows[0]["final_val_top1"], 0.8, 1e-12);
  EXPECT_NEAR(rows[0]["final_val_top1_sd"], 0.1, 1e-12);
  // Asked and achieved density side by side.
  EXPECT_DOUBLE_EQ(rows[0]["density"], 0.01);
  EXPECT_DOUBLE_EQ(rows[0]["achieved_density"], 0.01);
  // One configuration: every run carries its name.
  const json runs = report_json({"runs", db_});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]["configuration"], runs[1]["configuration"]);
  EXPECT_EQ(runs[0]["configuration"], runs[2]["configuration"]);
}

TEST_F(Configurations, RunsThatDifferInOneOptionAreRowsOfTheirOwnWithThatOptionShown) {
  add(id(1), 1, 0.1, 0.8);
  add(id(2), 1, 0.1, 0.8, {{"density", 0.05}});
  add(id(3), 1, 0.1, 0.8, {{"batch_size", 20}});
  add(id(4), 1, 0.1, 0.8, {{"topology", "complete"}});
  add(id(5), 1, 0.1, 0.8, {{"wire_dtype", "fp16"}});
  const json rows = report_json({"compare", db_});
  ASSERT_EQ(rows.size(), 5u) << rows.dump();
  for (const json& row : rows) {
    EXPECT_EQ(row["runs"], 1);
    for (const char* option : {"batch_size", "topology", "wire_dtype", "density"}) {
      EXPECT_TRUE(row.contains(option)) << option << " is not shown: " << row.dump();
    }
    EXPECT_FALSE(row.contains("lr")) << "the same in every row: not a column of its own";
    EXPECT_FALSE(row.contains("seed")) << "the seed is not part of a configuration";
  }
  std::multiset<std::string> seen;
  for (const json& row : rows) {
    seen.insert(row["density"].dump() + " " + row["batch_size"].dump() + " " +
                row["topology"].dump() + " " + row["wire_dtype"].dump());
  }
  EXPECT_EQ(seen, (std::multiset<std::string>{
                      "0.01 10 \"ring\" \"fp32\"", "0.05 10 \"ring\" \"fp32\"",
                      "0.01 20 \"ring\" \"fp32\"", "0.01 10 \"complete\" \"fp32\"",
                      "0.01 10 \"ring\" \"fp16\""}));
  // Scaling keeps them apart too.
  EXPECT_EQ(report_json({"scaling", db_}).size(), 5u);
}

// Where the runs were recorded and on how many threads is not what they computed: such runs
// are one configuration.
TEST_F(Configurations, WhatChangesNothingComputedDoesNotSplitAConfiguration) {
  add(id(1), 1, 0.1, 0.8);
  add(id(2), 2, 0.1, 0.8, {{"threads", 8}, {"db", "elsewhere.sqlite"}});
  const json rows = report_json({"compare", db_});
  ASSERT_EQ(rows.size(), 1u) << rows.dump();
  EXPECT_EQ(rows[0]["runs"], 2);
}

}  // namespace
}  // namespace commsgd::testing
