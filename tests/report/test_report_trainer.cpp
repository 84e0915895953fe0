// commsgd-report on runs of the real trainer: a GoogleTest environment launches commsgd-train
// under mpirun once (several algorithms and worker counts, synthetic data) into one database, and
// every case checks a subcommand's numbers against SQL written here on the raw tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/record/run_database.hpp"
#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Launch {
  const char* algo;
  int workers;
};
constexpr Launch kLaunches[] = {{"dense", 1}, {"dense", 2},     {"dense", 4}, {"topk", 2},
                                {"topk", 4},  {"gaussiank", 4}, {"gtopk", 4}};

constexpr int kGradStatsEvery = 5;
constexpr int kNormStudyEvery = 3;

class TrainerFixture : public ::testing::Environment {
 public:
  void SetUp() override {
    dir = scratch_directory("report_trainer");
    db = (dir / "runs.sqlite").string();
    // 256 samples, batch 8 per worker, 3 epochs: 8 to 32 iterations per epoch, so every run has
    // several --log-every windows (a steady state after the first) and 3 epochs. The sparse runs
    // measure grad_stats every kGradStatsEvery iterations, and the norm study every
    // kNormStudyEvery.
    for (const Launch& l : kLaunches) {
      std::vector<std::string> args = {COMMSGD_TRAIN,
                                       "--algo",
                                       l.algo,
                                       "--model",
                                       "mlp",
                                       "--dataset",
                                       "synthetic",
                                       "--synthetic-train",
                                       "256",
                                       "--batch-size",
                                       "8",
                                       "--epochs",
                                       "3",
                                       "--log-every",
                                       "4",
                                       "--db",
                                       db,
                                       "--quiet"};
      if (std::string(l.algo) != "dense") {
        args.insert(args.end(), {"--grad-stats-every", std::to_string(kGradStatsEvery),
                                 "--norm-study-every", std::to_string(kNormStudyEvery)});
      }
      const ProcessResult r = run_process(mpirun(l.workers, args), std::chrono::seconds(120));
      ASSERT_EQ(r.exit_code, 0) << l.algo << " P=" << l.workers << "\n" << r.output;
    }
  }
  void TearDown() override { fs::remove_all(dir); }

  static inline fs::path dir;
  static inline std::string db;
};

const std::string& db() {
  return TrainerFixture::db;
}

// Throughput by hand from `steps`: workers * batch / mean seconds per iteration, over every
// window but the first.
std::map<std::string, double> throughput_by_run() {
  std::map<std::string, double> samples;
  for (const json& row : query_json(db(), R"sql(
         SELECT r.id, r.workers * r.batch_size / avg(s.total_s_mean) AS samples_per_s
         FROM runs r JOIN steps s ON s.run_id = r.id
         WHERE s.step > (SELECT min(f.step) FROM steps f WHERE f.run_id = r.id)
         GROUP BY r.id)sql"))
    samples[row["id"]] = row["samples_per_s"];
  return samples;
}

std::string key(const std::string& algo, std::int64_t workers) {
  return algo + " P=" + std::to_string(workers);
}

// Run id by "algo P=workers" (each launched once).
std::map<std::string, std::string> run_ids() {
  std::map<std::string, std::string> ids;
  for (const json& row : query_json(db(), "SELECT id, algo, workers FROM runs"))
    ids[key(row["algo"], row["workers"])] = row["id"];
  return ids;
}

void expect_close(const json& actual, double expected, const std::string& what) {
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  EXPECT_NEAR(actual.get<double>(), expected, 1e-12 * std::abs(expected)) << what;
}

TEST(ReportOnTrainerRuns, FixtureHasEveryRunWithSeveralWindowsAndEpochs) {
  const json runs = query_json(db(), R"sql(
      SELECT r.status, (SELECT count(*) FROM steps s WHERE s.run_id = r.id) AS windows,
             (SELECT count(*) FROM epochs e WHERE e.run_id = r.id) AS epochs
      FROM runs r)sql");
  ASSERT_EQ(runs.size(), std::size(kLaunches));
  for (const json& r : runs) {
    EXPECT_EQ(r["status"], "completed");
    EXPECT_GE(r["windows"], 3);
    EXPECT_EQ(r["epochs"], 3);
  }
}

TEST(ReportOnTrainerRuns, RunsShowsTheRecordedNumbers) {
  const auto samples = throughput_by_run();
  const auto runs = by(report_json({"runs", db()}), "run_id");
  ASSERT_EQ(runs.size(), std::size(kLaunches));
  for (const auto& [id, row] : runs) {
    expect_close(row["samples_per_s"], samples.at(id), "samples_per_s " + id);
    const json last = query_json(db(), "SELECT val_top1 FROM epochs WHERE run_id = '" + id +
                                           "' ORDER BY epoch DESC LIMIT 1");
    EXPECT_EQ(row["final_val_top1"], last.at(0)["val_top1"]);
    EXPECT_EQ(row["epochs_done"], 3);
    const json bytes =
        query_json(db(), "SELECT avg(bytes_sent_mean) AS b FROM steps WHERE run_id = '" + id + "'");
    expect_close(row["bytes_sent_per_step"], bytes.at(0)["b"], "bytes " + id);
  }
}

TEST(ReportOnTrainerRuns, ScalingEfficiencyIsThroughputOverWorkersTimesOneWorker) {
  const auto samples = throughput_by_run();
  const auto ids = run_ids();
  const double one_worker = samples.at(ids.at("dense P=1"));
  const auto rows = by(report_json({"scaling", db()}), "algo");
  ASSERT_EQ(rows.size(), 4u);
  int cells = 0;
  for (const auto& [algo, row] : rows) {
    for (const int p : {1, 2, 4}) {
      const json& cell = row.at("P=" + std::to_string(p));
      const auto id = ids.find(key(algo, p));
      if (id == ids.end()) {
        EXPECT_TRUE(cell.is_null()) << key(algo, p) << " was not run";
        continue;
      }
      expect_close(cell, samples.at(id->second) / (p * one_worker), key(algo, p));
      ++cells;
    }
  }
  EXPECT_EQ(cells, static_cast<int>(std::size(kLaunches)));
}

// The cost model keeps each run's time besides communication as measured and predicts the
// communication: checked here for the sparse runs by the formulas of docs/design.md ("Cost
// model"), by hand, with the allgatherv algorithm Open MPI 4.1 runs for the run's set size.
TEST(ReportOnTrainerRuns, SimulateCheckPredictsCommunicationFromTheLink) {
  const double alpha = 1e-3, beta = 1e-8;
  const json rows = report_json({"simulate", "check", "--alpha", "1e-3", "--beta", "1e-8", db()});
  ASSERT_EQ(rows.size(), std::size(kLaunches));
  const json measured = query_json(db(), R"sql(
      SELECT r.id, r.algo, r.workers, b.total_s, b.communicate_s,
             json_extract(r.config, '$.parameters') AS d,
             (SELECT avg(density_mean) FROM steady_steps s WHERE s.run_id = r.id) AS density
      FROM runs r JOIN time_breakdown b ON b.run_id = r.id)sql");
  const auto by_id = by(measured, "id");
  int checked = 0;
  for (const json& row : rows) {
    EXPECT_EQ(row["alpha_s"], alpha);
    ASSERT_TRUE(row["predicted_s"].is_number()) << row;
    const json& m = by_id.at(row["run_id"]);
    const double k = m["density"].get<double>() * m["d"].get<double>();
    const int p = m["workers"];
    double communication = -1;
    if (m["algo"] == "topk" || m["algo"] == "gaussiank") {
      const double set = 8 * k, sizes = (alpha + 8 * beta) * (p == 4 ? 2 : 1);
      if (p == 2) {  // below 2 kB a set: the ring, one step
        ASSERT_LT(set, 2048) << key(m["algo"], p);
        communication = sizes + alpha + set * beta;
      } else if (set < 256) {  // P = 4: gather into rank 0, then a binomial broadcast of all four
        communication = sizes + 3 * (alpha + set * beta) + 2 * (alpha + 4 * set * beta);
      } else {  // P = 4, up to 4 kB a set: neighbour exchange, two steps
        ASSERT_LT(set, 4096) << key(m["algo"], p);
        communication = sizes + 2 * alpha + 3 * set * beta;
      }
    } else if (m["algo"] == "gtopk") {
      communication = 2 * (alpha + 8 * k * beta);  // P = 4: two rounds
    } else {
      continue;
    }
    expect_close(row["predicted_s"],
                 m["total_s"].get<double>() - m["communicate_s"].get<double>() + communication,
                 key(m["algo"], p));
    // The median over the steady windows, beside their mean.
    std::vector<double> windows;
    for (const json& w : query_json(db(),
                                    "SELECT communicate_s_mean FROM steady_steps WHERE "
                                    "run_id = '" +
                                        row["run_id"].get<std::string>() + "'")) {
      windows.push_back(w["communicate_s_mean"]);
    }
    ASSERT_GE(windows.size(), 1u);
    std::sort(windows.begin(), windows.end());
    const std::size_t half = windows.size() / 2;
    const double median =
        windows.size() % 2 == 1 ? windows[half] : (windows[half - 1] + windows[half]) / 2;
    expect_close(row["communication_median_s"], median, key(m["algo"], p));
    expect_close(row["communication_median_error"],
                 (row["predicted_s"].get<double>() - row["measured_s"].get<double>() +
                  row["communication_measured_s"].get<double>()) /
                         median -
                     1,
                 key(m["algo"], p));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// Without --alpha and --beta, a run's link is its network's calibration: the median over the
// pingpong runs recorded for it (three here, the newest far off). gTop-k's rounds each add the
// merge's time at the run's k: the median over the merge runs (two here, so the mean of both).
TEST(ReportOnTrainerRuns, SimulateCheckTakesTheMedianCalibrationAndGtopksMerge) {
  const fs::path calibrated = TrainerFixture::dir / "calibrated.sqlite";
  fs::copy_file(db(), calibrated, fs::copy_options::overwrite_existing);
  {
    record::RunDatabase bench(calibrated);
    // The rows of one benchmark run share their host and time: each host here is one run.
    const auto row = [](const char* suite, const char* name, const std::string& params,
                        double value, const char* host) {
      return record::BenchRow{suite, name, params, value, "s", host, "", "test"};
    };
    const std::string local = R"({"network": "local"})";
    for (const auto& [host, alpha] : {std::pair{"a", 1e-3}, {"b", 2e-3}, {"c", 9e-3}}) {
      bench.add_bench(std::vector{row("pingpong", "alpha", local, alpha, host),
                                  row("pingpong", "beta", local, 1e-8, host)});
    }
    for (const auto& [host, seconds] : {std::pair{"a", 1e-4}, {"b", 3e-4}}) {
      bench.add_bench(
          std::vector{row("merge", "gtopk_merge_seconds", R"({"k": 1})", seconds, host),
                      row("merge", "gtopk_merge_seconds", R"({"k": 1e9})", seconds, host)});
    }
  }
  const double alpha = 2e-3, beta = 1e-8, merge = 2e-4;
  const auto medians = report_json({"simulate", "calibration", calibrated.string()});
  ASSERT_EQ(medians.size(), 4u) << medians.dump(1);
  for (const json& m : medians) {
    if (m["suite"] == "pingpong") {
      EXPECT_EQ(m["calibrations"], 3);
      expect_close(m["value"], m["name"] == "alpha" ? alpha : beta, m.dump());
    } else {
      EXPECT_EQ(m["calibrations"], 2);
      expect_close(m["value"], merge, m.dump());
    }
  }

  const json measured = query_json(calibrated, R"sql(
      SELECT r.id, b.total_s - b.communicate_s AS computing,
             json_extract(r.config, '$.parameters') AS d,
             (SELECT avg(density_mean) FROM steady_steps s WHERE s.run_id = r.id) AS density
      FROM runs r JOIN time_breakdown b ON b.run_id = r.id WHERE r.algo = 'gtopk')sql");
  ASSERT_EQ(measured.size(), 1u);
  const json& m = measured.at(0);
  const double k = m["density"].get<double>() * m["d"].get<double>();
  for (const json& row : report_json({"simulate", "check", calibrated.string()})) {
    expect_close(row["alpha_s"], alpha, row["algo"]);
    if (row["run_id"] != m["id"]) continue;
    // P = 4: two rounds, each an exchange and a merge.
    expect_close(row["predicted_s"],
                 m["computing"].get<double>() + 2 * (alpha + 8 * k * beta) + 2 * merge, "gtopk");
    EXPECT_EQ(row["note"], "merge 200 us a round");
  }
}

// Efficiency is at most one. gTop-k's falls with P, each doubling adding a round. The others
// need not: Open MPI switches algorithms at fixed thresholds of P (Top-k's small allgatherv
// gathers into one rank and broadcasts up to 127 ranks, and runs Bruck's algorithm from 128 on),
// so a larger P can be priced cheaper.
TEST(ReportOnTrainerRuns, SimulateScalingIsOneForOneDenseWorkerAndAtMostOne) {
  const auto rows = by(report_json({"simulate", "scaling", "--max-workers", "1024", db()}), "algo");
  ASSERT_EQ(rows.size(), 4u);  // dense, gaussiank, gtopk, topk
  expect_close(rows.at("dense")["P=1"], 1.0, "dense P=1");
  for (const auto& [algo, row] : rows) {
    double previous = 2;
    for (int p = 1; p <= 1024; p *= 2) {
      const double efficiency = row.at("P=" + std::to_string(p));
      EXPECT_GT(efficiency, 0) << algo << " P=" << p;
      EXPECT_LE(efficiency, 1 + 1e-12) << algo << " P=" << p;
      if (algo == "gtopk") {
        EXPECT_LE(efficiency, previous) << algo << " P=" << p;
      }
      previous = efficiency;
    }
  }
  // Dense's bandwidth term stays, its latency term grows with P: gTop-k ends far ahead.
  EXPECT_GT(rows.at("gtopk")["P=1024"].get<double>(), rows.at("dense")["P=1024"].get<double>());
}

// --compute-ms replaces the measured computation, as a GPU's iteration time would: the same
// communication then weighs more against a shorter computation, and efficiency at P > 1 falls.
TEST(ReportOnTrainerRuns, SimulateScalingTakesAGivenComputeTime) {
  const auto measured =
      by(report_json({"simulate", "scaling", "--max-workers", "64", db()}), "algo");
  // Repeatable, one value each: the database after the first is not taken for a second value.
  const auto given = by(report_json({"simulate", "scaling", "--max-workers", "64", "--compute-ms",
                                     "mlp=0.02", db(), "--compute-ms", "mlp=0.01"}),
                        "algo");
  for (const auto& [algo, row] : given) {
    expect_close(row["compute_s"], 1e-5, algo + " compute_s");
    EXPECT_EQ(row["select_s"], measured.at(algo)["select_s"]) << algo;
    EXPECT_LT(row["P=64"].get<double>(), measured.at(algo)["P=64"].get<double>()) << algo;
  }
  expect_close(given.at("dense")["P=1"], 1.0, "dense P=1");
  // The given computation stands in for the dense runs: without them the other algorithms are
  // predicted as before.
  const auto without_dense = by(report_json({"simulate", "scaling", "--max-workers", "64", "--algo",
                                             "gtopk", "--compute-ms", "mlp=0.01", db()}),
                                "algo");
  ASSERT_EQ(without_dense.size(), 1u);
  EXPECT_EQ(without_dense.at("gtopk")["P=64"], given.at("gtopk")["P=64"]);
  // The rest of a prediction comes from runs: a model with none is refused.
  const ProcessResult unknown = report({"simulate", "scaling", db(), "--compute-ms", "vgg16=120"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("--compute-ms vgg16: no run of model vgg16 selected"),
            std::string::npos)
      << unknown.output;
}

TEST(ReportOnTrainerRuns, CompareHasSpeedupOverDenseAndTimeToTarget) {
  const auto samples = throughput_by_run();
  const auto ids = run_ids();
  const auto rows = by(report_json({"compare", db(), "--workers", "4", "--target", "0.9"}), "algo");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& [algo, row] : rows) {
    const std::string id = ids.at(key(algo, 4));
    expect_close(row["samples_per_s"], samples.at(id), algo);
    expect_close(row["speedup_vs_dense"], samples.at(id) / samples.at(ids.at("dense P=4")), algo);
    const json reached = query_json(
        db(), "SELECT min(wall_seconds) AS s FROM epochs WHERE val_top1 >= 0.9 AND run_id = '" +
                  id + "'");
    EXPECT_EQ(row["time_to_target_s"], reached.at(0)["s"]) << algo;
    EXPECT_EQ(row["runs"], 1);
  }
}

// The fixture's runs ran one after another: none is marked, and each rank's host, span and peak
// memory are in `ranks`, which `runs` reports.
TEST(ReportOnTrainerRuns, RunsAloneAreUnmarkedAndEveryRankIsRecorded) {
  const auto runs = by(report_json({"runs", db()}), "run_id");
  ASSERT_EQ(runs.size(), std::size(kLaunches));
  for (const auto& [id, row] : runs) {
    EXPECT_TRUE(row["overlapped_by"].is_null()) << id << ": " << row["overlapped_by"];
    const json ranks =
        query_json(db(),
                   "SELECT count(*) AS n, min(finished_at > started_at) AS ordered, "
                   "min(peak_rss_bytes) AS smallest, max(peak_rss_bytes) AS largest, "
                   "avg(peak_rss_bytes) AS mean FROM ranks WHERE run_id = '" +
                       id + "'");
    EXPECT_EQ(ranks.at(0)["n"], row["workers"]) << id;
    EXPECT_EQ(ranks.at(0)["ordered"], 1) << id;
    EXPECT_GT(ranks.at(0)["smallest"].get<double>(), 10e6) << id << ": a trainer takes > 10 MB";
    // The report rounds to 0.1 MiB.
    EXPECT_NEAR(row["peak_rss_max_mib"].get<double>(),
                ranks.at(0)["largest"].get<double>() / 1048576, 0.051)
        << id;
    EXPECT_NEAR(row["peak_rss_mean_mib"].get<double>(), ranks.at(0)["mean"].get<double>() / 1048576,
                0.051)
        << id;
  }
}

// Two runs started at once on this host measured each other: both are marked, each naming the
// other, and compare leaves both out unless --include-overlapping; a later run alone is not.
TEST(ReportOnTrainerRuns, TwoRunsAtOnceOnOneHostAreMarkedAndLeftOutOfCompare) {
  const fs::path dir = scratch_directory("report_overlap");
  const std::string shared = (dir / "overlap.sqlite").string();
  const auto launch = [&](const std::string& algo, int epochs) {
    return mpirun(2, {COMMSGD_TRAIN, "--algo", algo, "--density", "0.05", "--model", "mlp",
                      "--dataset", "synthetic", "--synthetic-train", "256", "--batch-size", "8",
                      "--epochs", std::to_string(epochs), "--db", shared, "--quiet"});
  };
  {
    Process dense(launch("dense", 20)), gtopk(launch("gtopk", 20));
    for (Process* at_once : {&dense, &gtopk}) {
      const ProcessResult ended = at_once->wait(std::chrono::seconds(240));
      ASSERT_EQ(ended.exit_code, 0) << ended.output;
    }
  }
  // The same configuration as the dense run above (20 epochs), so that compare has them in one
  // row: one counted, one overlapping.
  const ProcessResult alone = run_process(launch("dense", 20), std::chrono::seconds(120));
  ASSERT_EQ(alone.exit_code, 0) << alone.output;

  const json rows = report_json({"runs", shared});
  ASSERT_EQ(rows.size(), 3u);
  std::map<std::string, std::string> marked;  // run id -> overlapped_by
  for (const json& row : rows) {
    if (!row["overlapped_by"].is_null()) marked[row["run_id"]] = row["overlapped_by"];
  }
  ASSERT_EQ(marked.size(), 2u) << rows.dump(1);
  for (const auto& [id, by_run] : marked) {
    const std::string other =
        marked.begin()->first == id ? std::next(marked.begin())->first : marked.begin()->first;
    EXPECT_NE(by_run.find(other.substr(0, 8)), std::string::npos) << id << ": " << by_run;
  }
  EXPECT_TRUE(rows.at(2)["overlapped_by"].is_null()) << "the run alone, started last";
  const auto breakdown = by(report_json({"breakdown", shared}), "run_id");
  for (const auto& [id, by_run] : marked) EXPECT_EQ(breakdown.at(id)["overlapped_by"], by_run);
  EXPECT_TRUE(breakdown.at(rows.at(2)["run_id"])["overlapped_by"].is_null());
  // The cost model's check says which measurements had company.
  for (const json& run :
       report_json({"simulate", "check", "--alpha", "1e-3", "--beta", "1e-8", shared})) {
    const bool overlapped = marked.contains(run["run_id"].get<std::string>());
    EXPECT_EQ(run["note"].get<std::string>().find("overlapped") != std::string::npos, overlapped)
        << run.dump();
  }
  // Epochs carry wall-clock times: the convergence report (and its figure's labels) marks them.
  for (const json& epoch : report_json({"convergence", shared})) {
    const auto mark = marked.find(epoch["run_id"].get<std::string>());
    if (mark == marked.end()) {
      EXPECT_TRUE(epoch["overlapped_by"].is_null());
    } else {
      EXPECT_EQ(epoch["overlapped_by"], mark->second);
    }
  }

  const auto left_out = by(report_json({"compare", shared}), "algo");
  EXPECT_EQ(left_out.at("dense")["runs"], 1);
  EXPECT_EQ(left_out.at("dense")["overlapping_runs"], 1);
  EXPECT_EQ(left_out.at("gtopk")["runs"], 0);
  EXPECT_TRUE(left_out.at("gtopk")["samples_per_s"].is_null());
  const auto counted = by(report_json({"compare", shared, "--include-overlapping"}), "algo");
  EXPECT_EQ(counted.at("dense")["runs"], 2);
  EXPECT_EQ(counted.at("gtopk")["runs"], 1);
  EXPECT_FALSE(counted.at("gtopk")["speedup_vs_dense"].is_null());
  fs::remove_all(dir);
}

TEST(ReportOnTrainerRuns, BreakdownIsTheMeanOfEachPhaseOverTheSteadyState) {
  const auto rows = by(report_json({"breakdown", db()}), "run_id");
  const auto shares = by(report_json({"breakdown", db(), "--shares"}), "run_id");
  ASSERT_EQ(rows.size(), std::size(kLaunches));
  for (const auto& [id, row] : rows) {
    const json expected = query_json(db(), R"sql(
        SELECT avg(forward_backward_s_mean) AS fb, avg(communicate_s_mean) AS comm,
               avg(select_s_mean) AS sel, avg(total_s_mean) AS total
        FROM steps s
        WHERE run_id = ')sql" + id + R"sql(' AND
              step > (SELECT min(step) FROM steps f WHERE f.run_id = s.run_id))sql")
                              .at(0);
    expect_close(row["forward_backward_s"], expected["fb"], "forward_backward " + id);
    expect_close(row["communicate_s"], expected["comm"], "communicate " + id);
    expect_close(row["select_s"], expected["sel"], "select " + id);
    expect_close(row["total_s"], expected["total"], "total " + id);
    expect_close(shares.at(id)["communicate_share"],
                 expected["comm"].get<double>() / expected["total"].get<double>(), "share " + id);
  }
}

TEST(ReportOnTrainerRuns, ConvergenceHasEveryEpoch) {
  const json rows = report_json({"convergence", db()});
  const json epochs = query_json(db(), R"sql(
      SELECT e.run_id, e.epoch, e.wall_seconds, e.val_top1, e.val_loss
      FROM epochs e JOIN runs r ON r.id = e.run_id ORDER BY r.created_at, e.run_id, e.epoch)sql");
  ASSERT_EQ(rows.size(), epochs.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const char* column : {"run_id", "epoch", "wall_seconds", "val_top1", "val_loss"})
      EXPECT_EQ(rows[i][column], epochs[i][column]) << i << " " << column;
  }
}

TEST(ReportOnTrainerRuns, MergingTheFixtureTwiceAddsNothingTheSecondTime) {
  const std::string merged = (TrainerFixture::dir / "merged.sqlite").string();
  const json first = report_json({"merge", "-o", merged, db()}).at(0);
  EXPECT_EQ(first["runs_added"], std::size(kLaunches));
  const json second = report_json({"merge", "-o", merged, db()}).at(0);
  for (const char* count : {"runs_added", "runs_updated", "epochs", "steps", "bench"})
    EXPECT_EQ(second[count], 0) << count;
  const std::string counts =
      "SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(DISTINCT id) FROM runs) AS ids, "
      "(SELECT count(*) FROM epochs) AS epochs, (SELECT count(*) FROM steps) AS steps";
  EXPECT_EQ(query_json(merged, counts), query_json(db(), counts));
  // The merged copy reports the same numbers.
  EXPECT_EQ(report_json({"scaling", merged}), report_json({"scaling", db()}));
}

TEST(ReportOnTrainerRuns, ExportHasEveryStep) {
  const ProcessResult r = report({"export", "steps", db()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json n = query_json(db(), "SELECT count(*) AS n FROM steps");
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), n.at(0)["n"].get<int>() + 1);
}

// A per-run summary of a sparse measurement (`command`: grad-stats, norm-study), one row for each
// of the four sparse runs, each counting one measurement every `every`-th iteration of its 3
// epochs of 256 / (8 P) iterations. Empty (after a failure) when the report did not run.
json sparse_run_summaries(const std::string& command, int every) {
  const ProcessResult r = report({command, db(), "-f", "json"});
  if (r.exit_code != 0) {
    ADD_FAILURE() << command << ": " << r.output;
    return json::array();
  }
  const json rows = json::parse(r.output);
  EXPECT_EQ(rows.size(), 4u) << r.output;  // topk P=2, topk P=4, gaussiank, gtopk
  for (const json& row : rows) {
    const int iterations = 3 * 256 / (8 * row["workers"].get<int>());
    EXPECT_EQ(row["measurements"], (iterations + every - 1) / every)
        << command << " " << key(row["algo"], row["workers"]);
  }
  return rows;
}

// `columns` computed by hand over the summarized run's rows of `table`.
json by_hand(const json& row, const std::string& columns, const std::string& table) {
  return query_json(db(), "SELECT " + columns + " FROM " + table + " WHERE run_id = '" +
                              row["run_id"].get<std::string>() + "'")[0];
}

// An exact selection of k entries never leaves out more than 1 - k/d of the energy.
TEST(ReportOnTrainerRuns, GradStatsSummarizesEveryMeasurementOfTheSparseRuns) {
  for (const json& row : sparse_run_summaries("grad-stats", kGradStatsEvery)) {
    const std::string what = key(row["algo"], row["workers"]);
    const json raw =
        by_hand(row, "min(contraction) AS lo, max(contraction) AS hi, avg(contraction) AS mean",
                "grad_stats");
    expect_close(row["contraction_min"], raw["lo"], what + " min");
    expect_close(row["contraction_max"], raw["hi"], what + " max");
    expect_close(row["contraction_mean"], raw["mean"], what + " mean");
    EXPECT_GT(row["contraction_min"].get<double>(), 0.0) << what;
    if (row["selector"] == "exact") {
      EXPECT_EQ(row["below_linear"], row["measurements"]) << what;
    }
  }
  const json histogram =
      json::parse(query_json(db(), "SELECT histogram FROM grad_stats LIMIT 1")[0]["histogram"]
                      .get<std::string>());
  std::uint64_t counted =
      histogram["below"].get<std::uint64_t>() + histogram["above"].get<std::uint64_t>();
  for (const json& c : histogram["counts"]) counted += c.get<std::uint64_t>();
  EXPECT_EQ(histogram["counts"].size(), 64u);
  EXPECT_GT(counted, 0u);
}

// The norm study: the report's means are the table's, random-k never lands farther than ||x||
// from x, and the applied update lands closer to the dense aggregate than k random entries of it
// do (the gTop-k paper's observation), for each run on average.
TEST(ReportOnTrainerRuns, NormStudySummarizesEveryMeasurementOfTheSparseRuns) {
  for (const json& row : sparse_run_summaries("norm-study", kNormStudyEvery)) {
    const std::string what = key(row["algo"], row["workers"]);
    const json raw = by_hand(row,
                             "avg(selected_distance) AS selected, avg(randk_distance) AS randk, "
                             "avg(bound) AS bound, max(randk_distance - dense_norm) AS over",
                             "norm_study");
    expect_close(row["selected_mean"], raw["selected"], what + " selected");
    expect_close(row["randk_mean"], raw["randk"], what + " randk");
    expect_close(row["bound_mean"], raw["bound"], what + " bound");
    EXPECT_LE(raw["over"].get<double>(), 0.0) << what;
    EXPECT_LT(row["selected_mean"].get<double>(), row["randk_mean"].get<double>()) << what;
  }
}

TEST(ReportOnTrainerRuns, FiguresHaveOneSeriesPerRunOrAlgorithm) {
  const fs::path png = TrainerFixture::dir / "figure.png";
  auto check = [&](const std::vector<std::string>& args,
                   const std::vector<std::pair<std::string, int>>& series) {
    std::vector<std::string> argv = {"plot"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {db(), "-o", png.string()});
    const ProcessResult r = report(argv);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Figure figure = drawn(r.output);
    EXPECT_EQ(figure.series, series);
    EXPECT_EQ(png_size(png), std::pair(figure.width, figure.height));
  };
  std::vector<std::pair<std::string, int>> runs;
  for (const Launch& l : kLaunches) runs.emplace_back(key(l.algo, l.workers), 3);
  check({"convergence"}, runs);
  check({"scaling"}, {{"dense", 3}, {"gaussiank", 1}, {"gtopk", 1}, {"topk", 2}});
  check({"convergence", "--workers", "4"},
        {{"dense P=4", 3}, {"topk P=4", 3}, {"gaussiank P=4", 3}, {"gtopk P=4", 3}});
  std::vector<std::pair<std::string, int>> phases;
  for (const char* p :
       {"data", "forward_backward", "select", "communicate", "wait", "update", "other"})
    phases.emplace_back(p, static_cast<int>(std::size(kLaunches)));
  // Dense's buckets are allreduced on the engine's thread during backward: apart from the stack.
  phases.emplace_back("overlapped communication (not in the step)", 3);
  check({"breakdown"}, phases);
  // The first sparse run's histogram (at its last measurement, step 45 of 48) comes last.
  check({"grad-stats"}, {{"topk P=2", 10},
                         {"topk P=4", 5},
                         {"gaussiank P=4", 5},
                         {"gtopk P=4", 5},
                         {"histogram topk P=2, step 45", 64}});
  check({"norm-study"},
        {{"topk P=2", 16}, {"topk P=4", 8}, {"gaussiank P=4", 8}, {"gtopk P=4", 8}});
}

}  // namespace
}  // namespace commsgd::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new commsgd::testing::TrainerFixture);
  return RUN_ALL_TESTS();
}
