// commsgd-report, run as a user would, on the hand-made database: each subcommand's numbers (the
// values derived in handmade_db.cpp), the output formats, merge, the read-only guarantees, the
// figures, and one clear line for every kind of bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "analysis/record/peer_failures.hpp"
#include "analysis/record/run_database.hpp"
#include "tests/report/handmade_db.hpp"
#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using R = HandmadeRuns;

void exec(const fs::path& db, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_directory("report_cli");
    db_ = (dir_ / "handmade.sqlite").string();
    write_handmade_database(db_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_;
};

TEST_F(ReportCli, RunsListsEveryRunWithItsNumbers) {
  const auto runs = by(report_json({"runs", db_}), "run_id");
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_NEAR(runs.at(R::dense4)["samples_per_s"], 160, 1e-9);
  EXPECT_NEAR(runs.at(R::dense4)["scaling_efficiency"], 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(runs.at(R::topk4)["final_val_top1"], 0.9);
  EXPECT_EQ(runs.at(R::topk4)["status"], "completed");
  EXPECT_TRUE(runs.at(R::gtopk2)["scaling_efficiency"].is_null());

  EXPECT_EQ(report_json({"runs", db_, "--algo", "topk"}).size(), 2u);
  EXPECT_EQ(report_json({"runs", db_, "--where", "workers>=4"}).size(), 2u);
  EXPECT_EQ(report_json({"runs", db_, "-w", "workers >= 4"}).size(), 2u) << "as usage.md writes it";
  EXPECT_EQ(report_json({"runs", db_, "-w", " algo = topk "}).size(), 2u);
  EXPECT_EQ(report_json({"runs", "-w", "workers>=4", "-w", "algo=topk", db_}).size(), 1u)
      << "filters before the databases";
  EXPECT_EQ(report_json({"runs", db_, "-w", "samples_per_s>100", "-w", "algo!=topk"}).size(), 1u);
  EXPECT_EQ(report_json({"runs", db_, "-w", "run_id~%05"}).at(0)["run_id"], R::gtopk2);
  EXPECT_EQ(report_json({"runs", db_, "--network", "eth"}).at(0)["algo"], "gtopk");
  // A value with quotes and SQL in it is only ever a value.
  expect_one_line_error(report({"runs", db_, "-w", "algo=x' OR '1'='1"}), "no runs match");
}

TEST_F(ReportCli, CompareHasOneRowPerAlgorithmWithSpeedupAndTimeToTarget) {
  const auto rows = by(report_json({"compare", db_, "--workers", "4", "--target", "0.65"}), "algo");
  ASSERT_EQ(rows.size(), 2u);
  const json& dense = rows.at("dense");
  const json& topk = rows.at("topk");
  EXPECT_DOUBLE_EQ(dense["speedup_vs_dense"], 1.0);
  EXPECT_NEAR(topk["speedup_vs_dense"], 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(topk["samples_per_s"], 320);
  EXPECT_DOUBLE_EQ(dense["time_to_target_s"], 24);
  EXPECT_DOUBLE_EQ(topk["time_to_target_s"], 10);
  EXPECT_DOUBLE_EQ(topk["final_val_top1"], 0.9);
  EXPECT_DOUBLE_EQ(dense["bytes_sent_per_step"], 1000);
  EXPECT_DOUBLE_EQ(topk["bytes_sent_per_step"], 10);
  EXPECT_EQ(topk["runs"], 1);

  const json untimed = report_json({"compare", db_, "--workers", "4"});
  EXPECT_FALSE(untimed.at(0).contains("time_to_target_s")) << "no target, no column";
  // Never reached: NULL, not a time.
  EXPECT_TRUE(by(report_json({"compare", db_, "--workers", "4", "--target", "0.95"}), "algo")
                  .at("topk")["time_to_target_s"]
                  .is_null());
}

TEST_F(ReportCli, ScalingIsAlgorithmsByWorkerCounts) {
  const json rows = report_json({"scaling", db_});
  ASSERT_EQ(rows.size(), 3u);
  // network eth sorts first; dense before the others within a network.
  EXPECT_EQ(rows[0]["network"], "eth");
  EXPECT_TRUE(rows[0]["P=2"].is_null());
  EXPECT_EQ(rows[1]["algo"], "dense");
  EXPECT_DOUBLE_EQ(rows[1]["P=1"], 1.0);
  EXPECT_TRUE(rows[1]["P=2"].is_null());
  EXPECT_NEAR(rows[1]["P=4"], 0.4, 1e-12);
  EXPECT_EQ(rows[2]["algo"], "topk");
  EXPECT_DOUBLE_EQ(rows[2]["P=1"], 0.5);
  EXPECT_DOUBLE_EQ(rows[2]["P=4"], 0.8);
}

TEST_F(ReportCli, BreakdownInSecondsAndInShares) {
  const auto seconds = by(report_json({"breakdown", db_}), "run_id");
  ASSERT_EQ(seconds.size(), 5u);
  EXPECT_NEAR(seconds.at(R::dense4)["communicate_s"], 0.1, 1e-12);
  EXPECT_NEAR(seconds.at(R::dense4)["other_s"], 0.06, 1e-12);
  EXPECT_NEAR(seconds.at(R::dense4)["total_s"], 0.25, 1e-12);
  const auto shares = by(report_json({"breakdown", db_, "--shares"}), "run_id");
  EXPECT_NEAR(shares.at(R::dense4)["communicate_share"], 0.4, 1e-12);
  EXPECT_NEAR(shares.at(R::dense4)["forward_backward_share"], 0.2, 1e-12);
  EXPECT_FALSE(shares.at(R::dense4).contains("total_s"));
}

TEST_F(ReportCli, ConvergenceListsEpochsInOrder) {
  const json rows = report_json({"convergence", db_, "--algo", "dense", "--workers", "1"});
  ASSERT_EQ(rows.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(rows[e]["epoch"], e);
    EXPECT_DOUBLE_EQ(rows[e]["wall_seconds"], 10.0 * (e + 1));
  }
  EXPECT_DOUBLE_EQ(rows[1]["val_top1"], 0.7);
}

TEST_F(ReportCli, TextMarkdownAndCsvShowTheSameTable) {
  const ProcessResult text = report({"scaling", db_, "--algo", "topk"});
  EXPECT_EQ(text.output,
            "model  dataset    network  device  algo  selector  aggregation  P=1  P=1_sd  P=1_n  "
            "P=4  P=4_sd  P=4_n\n"
            "-----  ---------  -------  ------  ----  --------  -----------  ---  ------  -----  "
            "---  ------  -----\n"
            "mlp    synthetic  local    cpu     topk  exact     allgather    0.5       -      1  "
            "0.8       -      1\n");

  const ProcessResult markdown = report({"scaling", db_, "--algo", "topk", "-f", "markdown"});
  EXPECT_EQ(
      markdown.output,
      "| model | dataset | network | device | algo | selector | aggregation | P=1 | P=1_sd | "
      "P=1_n | P=4 | P=4_sd | P=4_n |\n"
      "| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
      "| mlp | synthetic | local | cpu | topk | exact | allgather | 0.5 | - | 1 | 0.8 | - | 1 "
      "|\n");

  const ProcessResult csv = report({"scaling", db_, "--algo", "topk", "-f", "csv"});
  EXPECT_EQ(csv.output,
            "model,dataset,network,device,algo,selector,aggregation,P=1,P=1_sd,P=1_n,P=4,P=4_sd,"
            "P=4_n\n"
            "mlp,synthetic,local,cpu,topk,exact,allgather,0.5,,1,0.8,,1\n");
}

TEST_F(ReportCli, ExportWritesATableAsCsv) {
  const ProcessResult r =
      report({"export", "steps", db_, "-w", std::string("run_id=") + R::dense4});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.output.starts_with("run_id,step,epoch,loss_mean,")) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 4) << "header and 3 windows";

  const fs::path file = dir_ / "summary.csv";
  ASSERT_EQ(report({"export", "run_summary", db_, "-o", file.string()}).exit_code, 0);
  const std::string csv = contents(file);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6) << csv;
}

TEST_F(ReportCli, SqlRunsOneReadOnlyQueryWithBoundParameters) {
  const json rows = report_json(
      {"sql", "SELECT samples_per_s FROM throughput WHERE run_id = ?", db_, "-p", R::topk4});
  EXPECT_EQ(rows, json::parse(R"([{"samples_per_s": 320.0}])"));

  const std::string before = contents(db_);
  expect_one_line_error(report({"sql", "DELETE FROM runs", db_}), "read-only");
  expect_one_line_error(report({"sql", "SELECT 1; DELETE FROM runs", db_}), "one SQL statement");
  expect_one_line_error(report({"sql", "ATTACH 'other.db' AS o", db_}), "attached");
  expect_one_line_error(report({"sql", "SELEC 1", db_}), "syntax error");
  expect_one_line_error(report({"sql", "SELECT ?", db_}), "1 parameters, 0 given");
  EXPECT_EQ(contents(db_), before);
  EXPECT_FALSE(fs::exists(dir_ / "other.db"));
}

TEST_F(ReportCli, ReportsNeverChangeTheFilesTheyRead) {
  const std::string before = contents(db_);
  for (const char* command : {"runs", "compare", "scaling", "breakdown", "convergence"})
    EXPECT_EQ(report({command, db_}).exit_code, 0) << command;
  EXPECT_EQ(contents(db_), before);
  EXPECT_FALSE(fs::exists(db_ + "-wal"));
  EXPECT_FALSE(fs::exists(db_ + "-shm"));
}

TEST_F(ReportCli, SeveralDatabasesAreReadAsOne) {
  const std::string other = (dir_ / "other.sqlite").string();
  {
    record::RunDatabase db(other);
    record::RunInfo r;
    r.id = "00000000-0000-4000-8000-0000000000ff";
    r.algo = "dense";
    r.model = "mlp";
    r.dataset = "synthetic";
    r.network = "local";
    r.device = "cpu";
    db.begin_run(r);
  }
  EXPECT_EQ(report_json({"runs", db_, other}).size(), 6u);
  EXPECT_EQ(report_json({"runs", db_, db_}).size(), 5u) << "a run read twice is one run";
}

TEST_F(ReportCli, MergingTwiceAddsNothing) {
  const std::string merged = (dir_ / "sub" / "merged.sqlite").string();
  const json first = report_json({"merge", "-o", merged, db_});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], json::parse(R"({"database": ")" + db_ + R"(", "runs_added": 5,
      "runs_updated": 0, "epochs": 10, "steps": 13, "grad_stats": 0, "norm_study": 0,
      "ranks": 0, "bench": 4, "peer_failures": 0})"));
  const json again = report_json({"merge", "-o", merged, db_, db_});
  for (const json& row : again) {
    for (const char* count : {"runs_added", "runs_updated", "epochs", "steps", "bench"})
      EXPECT_EQ(row[count], 0) << count;
  }
  const std::string counts =
      "SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM epochs) AS epochs, "
      "(SELECT count(*) FROM steps) AS steps, (SELECT count(*) FROM bench) AS bench";
  EXPECT_EQ(query_json(merged, counts), query_json(db_, counts));
  // The merged file is a run database like any other, views included.
  EXPECT_EQ(query_json(merged, "SELECT count(*) AS n FROM run_summary").at(0)["n"], 5);
}

TEST_F(ReportCli, MergingAgainBringsTheEndOfARunThatWasStillRunning) {
  const std::string live = (dir_ / "live.sqlite").string(), merged = (dir_ / "m.sqlite").string();
  record::RunDatabase db(live);
  record::RunInfo r;
  r.id = "00000000-0000-4000-8000-0000000000aa";
  r.algo = "dense";
  db.begin_run(r);
  record::EpochRow e;
  db.add_epoch(r.id, e);
  EXPECT_EQ(report_json({"merge", "-o", merged, live}).at(0)["runs_added"], 1);

  e.epoch = 1;
  db.add_epoch(r.id, e);
  db.finish_run(r.id, record::RunStatus::completed, "max epochs");
  const json second = report_json({"merge", "-o", merged, live}).at(0);
  EXPECT_EQ(second["runs_added"], 0);
  EXPECT_EQ(second["runs_updated"], 1);
  EXPECT_EQ(second["epochs"], 1);
  EXPECT_EQ(query_json(merged, "SELECT status, exit_reason FROM runs"),
            json::parse(R"([{"status": "completed", "exit_reason": "max epochs"}])"));
}

// A job whose rank 0 was killed before it could fold a peer's failure in (or never saw it: a
// network file system may show another host's new file late): the merge records it.
TEST_F(ReportCli, MergingRecordsAFailureKeptBesideTheSource) {
  const std::string live = (dir_ / "killed.sqlite").string(), merged = (dir_ / "m.sqlite").string();
  record::RunDatabase db(live);
  record::RunInfo r;
  r.id = "00000000-0000-4000-8000-0000000000bb";
  r.algo = "dense";
  db.begin_run(r);
  record::write_peer_failure(live, {r.id, 2, record::utc_now_iso8601(), "out of memory", {}});
  EXPECT_EQ(report_json({"merge", "-o", merged, live}).at(0)["peer_failures"], 1);
  EXPECT_EQ(query_json(merged, "SELECT status, exit_reason FROM runs"),
            json::parse(R"([{"status": "failed", "exit_reason": "rank 2: out of memory"}])"));
  EXPECT_EQ(query_json(live, "SELECT status FROM runs").at(0)["status"], "running")
      << "a merge's source is only read";
}

// A file of schema version 1 (before norm_study and run_figures) is read as if migrated, and left
// as it is: its reports are those of the same runs in a current file, and it merges into a
// current one.
TEST_F(ReportCli, OlderSchemaFilesAreReadAndMergedWithoutBeingChanged) {
  const std::string old = (dir_ / "v1.sqlite").string();
  fs::copy_file(db_, old);
  exec(old,
       "DROP TABLE run_overlaps; DROP TABLE run_figures; DROP TABLE norm_study; "
       "PRAGMA user_version = 1");
  const std::string before = contents(old);
  for (const char* command : {"runs", "compare", "convergence"}) {
    EXPECT_EQ(report_json({command, old}), report_json({command, db_})) << command;
  }
  expect_one_line_error(report({"norm-study", old}), "have no norm_study");
  const std::string merged = (dir_ / "merged.sqlite").string();
  EXPECT_EQ(report_json({"merge", "-o", merged, old}).at(0)["runs_added"], 5);
  EXPECT_EQ(query_json(merged, "PRAGMA user_version").at(0)["user_version"],
            record::RunDatabase::kSchemaVersion);
  EXPECT_EQ(contents(old), before);
}

// An older file of many runs reports as a current one, and says once how to make reading it fast.
TEST_F(ReportCli, ALargeOlderFileSaysHowToReadItAtOnce) {
  const std::string old = (dir_ / "v3.sqlite").string();
  {
    record::RunDatabase db(old);
    record::RunInfo r;
    r.algo = "dense";
    for (int i = 0; i < 1000; ++i) {
      r.id = fmt::format("00000000-0000-4000-8000-{:012d}", i);
      db.begin_run(r);
    }
  }
  exec(old, "DROP TABLE run_overlaps; DROP TABLE run_figures; PRAGMA user_version = 3");
  const ProcessResult result = report({"runs", old, "-f", "csv"});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("has schema version 3, so each report computes the figures of "
                               "its 1000 runs; `commsgd-report merge -o NEW"),
            std::string::npos)
      << result.output.substr(0, 400);
  const ProcessResult current = report({"runs", db_, "-f", "csv"});
  EXPECT_EQ(current.output.find("note:"), std::string::npos) << current.output;
}

// A file of schema version 4 has no overlapped communication in its steps: it reads as migrated
// (the column NULL, unknown), and reading writes nothing.
TEST_F(ReportCli, AVersionFourFileReadsAsMigratedWithoutAWrite) {
  const fs::path old = dir_ / "v4.sqlite";
  fs::copy_file(db_, old);
  exec(old.string(),
       "DROP VIEW time_breakdown; "
       "ALTER TABLE steps DROP COLUMN overlapped_communicate_s_mean; "
       "ALTER TABLE steps DROP COLUMN overlapped_communicate_s_max; "
       "ALTER TABLE run_figures DROP COLUMN overlapped_communicate_s; PRAGMA user_version = 4");
  const std::string before = contents(old);
  const json rows = report_json({"breakdown", old.string()});
  const json current = report_json({"breakdown", db_});
  ASSERT_EQ(rows.size(), current.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(rows[i]["overlapped_communicate_s"].is_null()) << rows[i].dump();
    EXPECT_EQ(rows[i]["total_s"], current[i]["total_s"]);
    EXPECT_EQ(rows[i]["other_s"], current[i]["other_s"]);
  }
  const json nulls = report_json({"sql",
                                  "SELECT count(*) AS n FROM steps "
                                  "WHERE overlapped_communicate_s_mean IS NULL",
                                  old.string()});
  EXPECT_GT(nulls.at(0)["n"].get<std::int64_t>(), 0);
  EXPECT_EQ(contents(old), before);
}

TEST_F(ReportCli, MergeRefusesOtherSchemaVersionsAndForeignFiles) {
  const std::string future = (dir_ / "future.sqlite").string();
  fs::copy_file(db_, future);
  const int newer = record::RunDatabase::kSchemaVersion + 1;
  exec(future, "PRAGMA user_version = " + std::to_string(newer));
  const std::string merged = (dir_ / "merged.sqlite").string();
  expect_one_line_error(report({"merge", "-o", merged, db_, future}),
                        "schema version " + std::to_string(newer) +
                            ", but this build reads version " +
                            std::to_string(record::RunDatabase::kSchemaVersion));
  EXPECT_FALSE(fs::exists(merged)) << "every input is checked before anything is written";
  expect_one_line_error(report({"merge", "-o", future, db_}),
                        "schema version " + std::to_string(newer));

  const std::string foreign = (dir_ / "foreign.sqlite").string();
  exec(foreign, "CREATE TABLE t (x)");
  expect_one_line_error(report({"merge", "-o", merged, foreign}), "not a commsgd run database");
  expect_one_line_error(report({"merge", "-o", db_, db_}), "is the merge's output");
}

TEST_F(ReportCli, BadInputIsOneClearLineAndExitStatusTwo) {
  const std::string garbage = (dir_ / "garbage.sqlite").string();
  std::ofstream(garbage, std::ios::binary) << std::string(4096, '\x5a');
  const std::string empty = (dir_ / "empty.sqlite").string();
  { record::RunDatabase db(empty); }  // the schema, but no runs
  const std::string zero = (dir_ / "zero.sqlite").string();
  std::ofstream{zero};

  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"runs", (dir_ / "missing.sqlite").string()}, "missing.sqlite: no such file"},
      {{"runs", dir_.string()}, "is a directory"},
      {{"compare", garbage}, "garbage.sqlite: not an SQLite database"},
      {{"scaling", zero}, "zero.sqlite: empty; not a commsgd run database"},
      {{"runs", empty}, "empty.sqlite: no runs recorded"},
      {{"breakdown", empty, "--algo", "dense"}, "no runs recorded"},
      {{"runs", db_, "--where", "colour=red"}, "unknown filter column 'colour'"},
      {{"runs", db_, "--where", "algo"}, "expected COLUMN OP VALUE"},
      {{"runs", db_, "--algo", "nope"}, "no runs match algo=nope"},
      {{"export", "nope", db_}, "no table or view 'nope'"},
      {{"export", "steps", db_, "-w", "samples_per_s>1"}, "unknown filter column"},
      {{"runs", db_, "--format", "xml"}, "--format"},
      {{"plot", "scaling", db_, "-o", (dir_ / "x.jpg").string()}, ".png, .svg or .pdf"},
      {{"plot", "convergence", db_, "-o", "x.png", "--metric", "speed"}, "--metric"},
      {{"simulate", "check", db_, "--alpha", "1e-3"}, "--alpha and --beta go together"},
      {{"simulate", "scaling", db_, "--link-of", "nowhere"},
       "--link-of nowhere: no pingpong alpha-beta recorded"},
      {{"simulate", "check", db_}, "no selected run has steps and a parameter count"},
      {{"simulate", "paper", db_, "--compute-ms", "resnet20"}, "expected MODEL=MILLISECONDS"},
      {{"simulate", "paper", db_, "--compute-ms", "resnet20=-3"}, "expected MODEL=MILLISECONDS"},
      {{"simulate", "paper", db_, "--compute-ms", "resnet20=5ms"}, "expected MODEL=MILLISECONDS"},
      {{"frobnicate", db_}, "unknown command 'frobnicate'"},
      {{}, "A subcommand is required"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(fmt::format("commsgd-report {}", fmt::join(args, " ")));
    expect_one_line_error(report(args), fragment);
  }
}

// plot.py reports each series it drew; the figure's pixels must be the PNG's.
void expect_png(const ProcessResult& r, const fs::path& file,
                const std::vector<std::pair<std::string, int>>& series) {
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Figure figure = drawn(r.output);
  EXPECT_EQ(figure.series, series) << r.output;
  const auto size = png_size(file);
  ASSERT_TRUE(size) << file << " is not a PNG";
  EXPECT_EQ(*size, std::pair(figure.width, figure.height));
  EXPECT_GT(fs::file_size(file), 1000u);
}

TEST_F(ReportCli, PlotsDrawOneSeriesPerRunAlgorithmOrPhase) {
  const fs::path png = dir_ / "figure.png";
  expect_png(report({"plot", "convergence", db_, "-o", png.string()}), png,
             {{"dense P=1", 3}, {"topk P=1", 1}, {"dense P=4", 3}, {"topk P=4", 3}});
  // Networks differ between the rows, so they are named; eth's gtopk has no efficiency.
  expect_png(report({"plot", "scaling", db_, "-o", png.string()}), png,
             {{"local dense", 2}, {"local topk", 2}});
  expect_png(report({"plot", "scaling", db_, "--network", "local", "-o", png.string()}), png,
             {{"dense", 2}, {"topk", 2}});
  std::vector<std::pair<std::string, int>> phases;
  for (const char* p :
       {"data", "forward_backward", "select", "communicate", "wait", "update", "other"})
    phases.emplace_back(p, 5);
  expect_png(report({"plot", "breakdown", db_, "-o", png.string()}), png, phases);
  expect_png(report({"plot", "selection", db_, "-o", png.string()}), png,
             {{"exact, density 0.01", 2}, {"gaussian, density 0.01", 1}});
}

TEST_F(ReportCli, PlotFormatFollowsTheSuffix) {
  const fs::path svg = dir_ / "f.svg", pdf = dir_ / "f.pdf";
  ASSERT_EQ(
      report({"plot", "convergence", db_, "-o", svg.string(), "--metric", "val_loss"}).exit_code,
      0);
  EXPECT_NE(contents(svg).find("<svg"), std::string::npos);
  ASSERT_EQ(report({"plot", "breakdown", db_, "-o", pdf.string()}).exit_code, 0);
  EXPECT_TRUE(contents(pdf).starts_with("%PDF"));
}

TEST_F(ReportCli, PlotsWithNothingToDrawSaySo) {
  expect_one_line_error(report({"plot", "scaling", db_, "--network", "eth", "-o", "x.png"}),
                        "no 1-worker run");
  expect_one_line_error(
      report({"plot", "convergence", db_, "--metric", "val_perplexity", "-o", "x.png"}),
      "no epochs with val_perplexity");
  expect_one_line_error(report({"plot", "selection", db_, "-w", "host=elsewhere", "-o", "x.png"}),
                        "no selection benchmarks");
}

}  // namespace
}  // namespace commsgd::testing
