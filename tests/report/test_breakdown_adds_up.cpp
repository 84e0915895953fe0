// The time breakdown of real trainer runs, every algorithm at P = 4: the training thread's phases
// add up to the step, their shares to 1, and communication that a thread of its own ran while
// training went on is reported apart, never as a phase. Before schema version 5, dense's bucket
// allreduces (on the engine's thread, during backward) were counted as communicate_s on top of
// the backward they hid behind, and sgp's exchange as communicate_s, wait_s and update_s at once.
#include <gtest/gtest.h>

#include "tests/report/report_cli.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Launch {
  std::string label;
  std::vector<std::string> flags;
  bool overlaps;  // communicates on a thread of its own while training goes on
};

const std::vector<Launch>& launches() {
  static const std::vector<Launch> all = {
      {"dense", {"--algo", "dense"}, true},
      {"dense unbucketed", {"--algo", "dense", "--bucket-mb", "0"}, false},
      {"topk", {"--algo", "topk"}, false},
      {"gtopk", {"--algo", "gtopk"}, false},
      {"gaussiank", {"--algo", "gaussiank"}, false},
      {"signsgd", {"--algo", "signsgd"}, false},
      {"ef-signsgd", {"--algo", "ef-signsgd"}, false},
      {"qsgd", {"--algo", "qsgd"}, false},
      {"powersgd", {"--algo", "powersgd"}, false},
      {"sgp", {"--algo", "sgp"}, false},
      {"osgp", {"--algo", "osgp"}, true},
      {"dpsgd", {"--algo", "dpsgd"}, false},
      {"adpsgd", {"--algo", "adpsgd"}, true},
  };
  return all;
}

constexpr int kWorkers = 4;
const char* const kPhases[] = {"data_s", "forward_backward_s", "select_s", "communicate_s",
                               "wait_s", "update_s",           "other_s"};

class Runs : public ::testing::Environment {
 public:
  void SetUp() override {
    dir = scratch_directory("breakdown_adds_up");
    db = (dir / "runs.sqlite").string();
    // 64 steps a rank: at 16, a whole adpsgd run could end before its gossip's first exchange
    // did, leaving no overlapped second to check.
    for (const Launch& l : launches()) {
      std::vector<std::string> args = {
          COMMSGD_TRAIN, "--model",      "mlp", "--dataset", "synthetic", "--synthetic-train",
          "2048",        "--batch-size", "8",   "--epochs",  "1",         "--log-every",
          "4",           "--db",         db,    "--quiet"};
      args.insert(args.end(), l.flags.begin(), l.flags.end());
      const ProcessResult r = run_process(mpirun(kWorkers, args), std::chrono::seconds(120));
      ASSERT_EQ(r.exit_code, 0) << l.label << "\n" << r.output;
      const json id = query_json(db, "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1");
      labels[id.at(0)["id"].get<std::string>()] = &l;
    }
  }
  void TearDown() override { fs::remove_all(dir); }

  static inline fs::path dir;
  static inline std::string db;
  static inline std::map<std::string, const Launch*> labels;  // by run id
};

TEST(Breakdown, ThePhasesAddUpToTheStepAndOverlappedCommunicationIsApart) {
  const auto seconds = by(report_json({"breakdown", Runs::db}), "run_id");
  const auto shares = by(report_json({"breakdown", Runs::db, "--shares"}), "run_id");
  ASSERT_EQ(seconds.size(), launches().size());
  for (const auto& [id, row] : seconds) {
    const Launch& launch = *Runs::labels.at(id);
    SCOPED_TRACE(launch.label + " " + row.dump());
    const double total = row["total_s"].get<double>();
    ASSERT_GT(total, 0);
    double sum = 0, share_sum = 0;
    for (const char* phase : kPhases) {
      sum += row[phase].get<double>();
      const std::string share = std::string(phase).substr(0, std::string(phase).size() - 2);
      share_sum += shares.at(id)[share + "_share"].get<double>();
    }
    EXPECT_NEAR(sum, total, 0.02 * total);
    EXPECT_NEAR(share_sum, 1.0, 1e-9);
    // The rest is what no phase counted: a negative one would be a second counted twice.
    for (const char* phase : kPhases) EXPECT_GE(row[phase].get<double>(), -0.02 * total) << phase;
    // Over every window: adpsgd's training may outrun its gossip for whole windows on 2 cores.
    const double overlapped =
        query_json(Runs::db,
                   "SELECT sum(overlapped_communicate_s_mean) AS s FROM steps "
                   "WHERE run_id = '" +
                       id + "'")
            .at(0)["s"]
            .get<double>();
    EXPECT_GE(row["overlapped_communicate_s"].get<double>(), 0);
    if (launch.overlaps) {
      EXPECT_GT(overlapped, 0);
    } else {
      EXPECT_EQ(overlapped, 0);
      EXPECT_GT(row["communicate_s"].get<double>(), 0) << "its exchange is on the training thread";
      // Without --barrier-before-communicate nothing but another thread's exchange is waited for.
      EXPECT_EQ(row["wait_s"].get<double>(), 0);
    }
  }
}

TEST(Breakdown, ThePlotStacksThePhasesOnlyAndDrawsOverlappedCommunicationApart) {
  const fs::path png = Runs::dir / "breakdown.png";
  const ProcessResult r = report({"plot", "breakdown", Runs::db, "-o", png.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Figure figure = drawn(r.output);
  const int runs = static_cast<int>(launches().size());
  int overlapping = 0;  // runs with overlapped communication in their steady state
  for (const json& row : report_json({"breakdown", Runs::db}))
    overlapping += row["overlapped_communicate_s"].get<double>() > 0 ? 1 : 0;
  ASSERT_GE(overlapping, 1);
  const std::vector<std::pair<std::string, int>> expected = {
      {"data", runs},   {"forward_backward", runs},
      {"select", runs}, {"communicate", runs},
      {"wait", runs},   {"update", runs},
      {"other", runs},  {"overlapped communication (not in the step)", overlapping}};
  EXPECT_EQ(figure.series, expected);
  EXPECT_EQ(png_size(png), std::pair(figure.width, figure.height));
}

}  // namespace
}  // namespace commsgd::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new commsgd::testing::Runs);
  return RUN_ALL_TESTS();
}
