// commsgd-report papers and reproduce, run as a user would: the papers' values reach every
// report's SQL, a page is written from its spec and databases (and byte for byte the same from a
// copy of them), an index lists the pages' verdicts with the scale each was decided at, and a spec
// that leaves a claim undecided, or decides it without a reason or without its scale, is refused
// in one line.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/report/handmade_db.hpp"
#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

void write(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

// The gTop-k claims a page must decide, all but `checked` as not testable.
std::string claims_but(const std::string& checked) {
  std::string text;
  for (const std::string key : {"bytes-log-p", "faster-than-topk", "scaling-efficiency", "accuracy",
                                "norm-closer-than-randk"}) {
    if (key != checked) text += "[[claim]]\nkey = \"" + key + "\"\nnot_testable = \"not here\"\n\n";
  }
  return text;
}

// The scale of every run of the hand-made database, on which kHolds below rests.
constexpr const char* kAllRuns = "SELECT workers, device, network, model, dataset FROM runs";

class Reproduce : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_directory("reproduce");
    write_handmade_database((dir_ / "runs.sqlite").string());
    fs::create_directories(dir_ / "pages");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A gTop-k page over runs.sqlite whose one checked claim is `check` at `scale` (none if empty),
  // with `extra` at the end.
  fs::path spec(const std::string& check, const std::string& extra = "",
                const std::string& scale = kAllRuns) {
    const fs::path file = dir_ / "pages" / "page.toml";
    write(file, R"(page = "pages/README.md"
title = "A page"
paper = "gtopk"
remake = "by hand"
about = "What the runs are."
reading = "Why it is so."

[databases]
runs = "runs.sqlite"

[[section]]
heading = "The runs"
text = "One row per algorithm."
database = "runs"
command = ["sql", "SELECT algo, count(*) AS runs FROM runs GROUP BY algo ORDER BY algo"]
figures = ["figure.png"]

[[section]]
heading = "Only words"
text = "No table here."

[[claim]]
key = "accuracy"
database = "runs"
fidelity = ["G13"]
)" + (scale.empty() ? "" : "scale = \"\"\"" + scale + "\"\"\"\n") +
                    "check = \"\"\"" + check + "\"\"\"\n\n" + claims_but("accuracy") + extra);
    return file;
  }

  ProcessResult reproduce(const fs::path& spec_file, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"reproduce", spec_file.string(), "--root", dir_.string()};
    args.insert(args.end(), more.begin(), more.end());
    return report(args);
  }

  fs::path dir_;
};

constexpr const char* kHolds =
    "SELECT CASE WHEN count(*) = 5 THEN 'holds' ELSE 'differs' END, printf('%d runs', count(*)) "
    "FROM runs";

TEST_F(Reproduce, PapersValuesCarryWhereTheyAreReadAndReachEverySql) {
  const json values = report_json({"papers"});
  ASSERT_FALSE(values.empty());
  std::size_t gtopk = 0;
  for (const json& v : values) {
    EXPECT_FALSE(v["source"].get<std::string>().empty()) << v;
    EXPECT_FALSE(v["unit"].get<std::string>().empty()) << v;
    gtopk += v["paper"] == "gtopk";
  }
  const json counted =
      report_json({"sql", "SELECT count(*) AS n FROM paper_values WHERE paper = 'gtopk'",
                   (dir_ / "runs.sqlite").string()});
  EXPECT_EQ(counted.at(0)["n"], gtopk);
  // simulate paper sets a prediction beside each model of the paper's scaling table (over the
  // committed cost-model runs: the hand-made ones record no parameter count).
  std::size_t scaling = 0;
  for (const json& v : values)
    scaling += v["quantity"] == "scaling efficiency" && v["paper"] == "gtopk";
  const std::string costmodel = COMMSGD_SOURCE_DIR "/results/costmodel/runs.sqlite";
  const json predicted = report_json({"simulate", "paper", costmodel});
  EXPECT_EQ(predicted.size(), scaling);
  const json of_paper = report_json({"simulate", "paper", "--compute-of-paper", costmodel});
  ASSERT_EQ(of_paper.size(), scaling);
  for (std::size_t i = 0; i < scaling; ++i) {
    if (predicted[i]["model"] != "vgg16") continue;
    EXPECT_DOUBLE_EQ(of_paper[i]["compute_s"], 0.139536) << "the paper's computation of VGG-16";
    EXPECT_NE(of_paper[i]["predicted"], predicted[i]["predicted"]);
  }
  // A computation given stands in for the model's dense runs; each row still needs runs of its
  // own algorithm.
  std::map<std::string, json> vgg16;
  for (const json& row : report_json(
           {"simulate", "paper", costmodel, "--algo", "gtopk", "--compute-ms", "vgg16=250"})) {
    if (row["model"] == "vgg16") vgg16[row["algo"].get<std::string>()] = row;
  }
  ASSERT_EQ(vgg16.size(), 3u);
  EXPECT_DOUBLE_EQ(vgg16.at("gtopk")["compute_s"], 0.25);
  EXPECT_EQ(vgg16.at("gtopk")["note"], "computation given, selection measured here");
  EXPECT_EQ(vgg16.at("topk")["note"], "no topk runs of vgg16 selected");
  EXPECT_EQ(vgg16.at("dense")["note"], "no dense runs of vgg16 selected");
}

TEST_F(Reproduce, APageIsItsSpecTheDatabasesAndThePapersValues) {
  const ProcessResult r = reproduce(spec(kHolds));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = contents(dir_ / "pages" / "README.md");
  for (const std::string part :
       {"# A page\n\nWhat the runs are.", "## The paper",
        "| **holds** at P = 1, 2, 4 (CPU, network 'eth' and unshaped local network, MLP on "
        "synthetic data) | 5 runs | [G13](../configs/papers/FIDELITY.md) |",
        "**not testable here** | not here", "realdata_speedup()",
        "`commsgd-report sql QUERY runs.sqlite`", "| algo | runs |\n", "| dense | 2 |",
        "![figure.png](figure.png)", "## Only words\n\nNo table here.",
        "## Reading (hand-written)\n\nWhy it is so."}) {
    EXPECT_NE(page.find(part), std::string::npos) << part << "\nin:\n" << page;
  }

  // From a copy of the database, the same page byte for byte: it names the spec's path.
  fs::copy_file(dir_ / "runs.sqlite", dir_ / "copy.sqlite");
  const ProcessResult again = reproduce(
      dir_ / "pages" / "page.toml", {"--database", "runs=" + (dir_ / "copy.sqlite").string(), "-o",
                                     (dir_ / "again.md").string()});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(contents(dir_ / "again.md"), page);
}

TEST_F(Reproduce, AnIndexListsEachPagesClaimsWithTheirVerdicts) {
  spec(kHolds);
  write(dir_ / "index.toml", R"(page = "INDEX.md"
title = "Results"
remake = "by hand"
summarize = ["pages/page.toml"]
)");
  const ProcessResult r = reproduce(dir_ / "index.toml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string index = contents(dir_ / "INDEX.md");
  EXPECT_NE(index.find("| gTop-k S-SGD | gTop-k S-SGD converges"), std::string::npos) << index;
  EXPECT_NE(index.find("| **holds** at P = 1, 2, 4 (CPU, network 'eth' and unshaped local "
                       "network, MLP on synthetic data) | [pages](pages/README.md) |"),
            std::string::npos)
      << index;
  EXPECT_NE(index.find("| **not testable here** |"), std::string::npos) << index;
}

// The scale is the runs' own: their P, device, network (an emulated link with its rate) and model
// on its data set, as a paper writes them; what a run does not have (a benchmark's network,
// model and data) is left out.
TEST_F(Reproduce, AVerdictSaysTheScaleOfTheRunsItRestsOn) {
  const std::map<std::string, std::string> shown = {
      {"SELECT column1 AS workers, column2 AS device, column3 AS network, column4 AS model, "
       "column5 AS dataset FROM (VALUES (8, 'cuda:0', 'emulated:1gbit', 'lenet', 'Fashion-MNIST'), "
       "(4, 'cuda', 'emulated:1gbit', 'lenet', 'Fashion-MNIST'))",
       "| **holds** at P = 4, 8 (GPU, emulated 1 Gbit/s, LeNet-5 on Fashion-MNIST) | 5 runs |"},
      {std::string(kAllRuns) + " WHERE network = 'local'",
       "| **holds** at P = 1, 4 (CPU, unshaped local network, MLP on synthetic data) | 5 runs |"},
      {"SELECT 1 AS workers, 'cpu' AS device, NULL AS network, NULL AS model, NULL AS dataset",
       "| **holds** at P = 1 (CPU) | 5 runs |"}};
  for (const auto& [scale, row] : shown) {
    const ProcessResult r = reproduce(spec(kHolds, "", scale));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string page = contents(dir_ / "pages" / "README.md");
    EXPECT_NE(page.find(row), std::string::npos) << row << "\nin:\n" << page;
  }
}

TEST_F(Reproduce, ASpecThatDoesNotDecideIsRefusedInOneLine) {
  const std::string differs = "SELECT 'differs', 'fewer runs than that'";
  expect_one_line_error(reproduce(spec(differs)), "differs_because does not say why");
  expect_one_line_error(reproduce(spec("SELECT 'maybe', 'x'")), "the verdict 'holds' or 'differs'");
  expect_one_line_error(reproduce(spec("SELECT 'holds'")), "one row of (verdict, evidence)");
  expect_one_line_error(reproduce(spec("SELECT nope FROM runs")), "claim 'accuracy': check");
  expect_one_line_error(
      reproduce(spec(kHolds, "[[claim]]\nkey = \"fast\"\nnot_testable = \"x\"\n")),
      "paper gtopk has no claim 'fast'");
  expect_one_line_error(reproduce(spec(kHolds, "titel = \"x\"\n")), "unknown key 'titel'");
  expect_one_line_error(reproduce(spec(kHolds, "[[claim]]\nkey = \"accuracy\"\n")),
                        "give either check (with database and scale) or not_testable");

  // A verdict without the scale it was decided at would read as the paper's.
  expect_one_line_error(reproduce(spec(kHolds, "", "")), "claim 1: 'scale' is missing");
  expect_one_line_error(
      reproduce(spec(kHolds, "[[claim]]\nkey = \"fast\"\nnot_testable = \"x\"\nscale = \"x\"\n")),
      "scale goes with check");
  expect_one_line_error(reproduce(spec(kHolds, "", "SELECT workers FROM runs")),
                        "scale must give the columns (workers, device, network, model, dataset)");
  expect_one_line_error(reproduce(spec(kHolds, "", std::string(kAllRuns) + " WHERE workers > 8")),
                        "claim 'accuracy': scale gave no runs");
  expect_one_line_error(
      reproduce(
          spec(kHolds, "", "SELECT 'four' AS workers, device, network, model, dataset FROM runs")),
      "workers as a count");
  expect_one_line_error(reproduce(spec(kHolds, "", "SELECT nope FROM runs")),
                        "claim 'accuracy': scale");

  fs::path file = spec(kHolds);
  std::string text = contents(file);
  text.erase(text.find("[[claim]]\nkey = \"scaling-efficiency\""),
             std::string("[[claim]]\nkey = \"scaling-efficiency\"\nnot_testable = \"not here\"\n\n")
                 .size());
  write(file, text);
  expect_one_line_error(reproduce(file), "claim 'scaling-efficiency' is not decided");

  expect_one_line_error(reproduce(spec(kHolds), {"--database", "bench=x.sqlite"}),
                        "names no database 'bench'");
  expect_one_line_error(reproduce(spec(kHolds), {"--database", "runs"}), "expected NAME=PATH");
}

}  // namespace
}  // namespace commsgd::testing
