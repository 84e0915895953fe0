// --model torchscript: a network written in Python, exported with Debian's python3-torch by
// tools/export_torchscript.py, trained by commsgd-train like a built-in model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/torchscript_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

// tools/export_torchscript.py's small-cnn on 1×8×8 inputs: conv 1→16 (160), conv 16→32 (4640),
// linear 128→10 (1290).
constexpr long kSmallCnnParameters = 160 + 4640 + 1290;

class TorchScriptTraining : public TrainerRuns {
 protected:
  void SetUp() override {
    TrainerRuns::SetUp();
    cnn_ = dir_ / "cnn.pt";
    export_torchscript("small-cnn", cnn_,
                       {"--channels", "1", "--height", "8", "--width", "8", "--classes", "10"});
  }

  // The digits as 1×8×8 images, for the exported CNN.
  std::vector<std::string> digits_cnn(const std::vector<std::string>& more) const {
    std::vector<std::string> args = {
        "--dataset", "csv",     "--data-path", COMMSGD_DIGITS_CSV, "--csv-shape",
        "1,8,8",     "--model", "torchscript", "--model-file",     cnn_.string()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  fs::path cnn_;
};

TEST_F(TorchScriptTraining, DenseGtopkAndSgpLearnTheDigitsAtTwoRanks) {
  const std::string db = (dir_ / "digits.sqlite").string();
  for (const char* algo : {"dense", "gtopk", "sgp"}) {
    const ProcessResult r =
        train(2, digits_cnn({"--algo", algo, "--density", "0.05", "--epochs", "12", "--batch-size",
                             "16", "--lr", "0.05", "--db", db}));
    ASSERT_EQ(r.exit_code, 0) << algo << "\n" << r.output;
  }
  const auto rows = query(db,
                          "select r.algo, r.status, e.val_top1, "
                          "json_extract(r.config, '$.model_file_fnv1a64'), "
                          "json_extract(r.config, '$.parameters') from runs r join epochs e "
                          "on e.run_id = r.id and e.epoch = 11 order by r.algo");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row[1], "completed") << row[0];
    EXPECT_GT(std::stod(row[2]), 0.90) << row[0] << " held-out top-1";
    EXPECT_EQ(row[3].size(), 16u) << row[0] << ": the model file's hash in the config";
    EXPECT_EQ(row[4], std::to_string(kSmallCnnParameters)) << row[0];
  }
}

// As the built-in models' equivalence test (test_dense.cpp): the small CNN has no batch norm, so
// the gradient of the mean loss over 2 ranks × b samples is that over 1 rank × 2b.
TEST_F(TorchScriptTraining, TwoRanksMatchOneRankWithTwiceTheBatch) {
  const std::vector<std::string> common = digits_cnn(
      {"--algo", "dense", "--max-steps", "25", "--epochs", "1", "--lr", "0.05", "--momentum", "0.9",
       "--weight-decay", "1e-4", "--seed", "7", "--db-dir", dir_.string()});
  auto two = common;
  two.insert(two.end(), {"--batch-size", "8", "--dump-params", (dir_ / "p2.bin").string()});
  auto one = common;
  one.insert(one.end(), {"--batch-size", "16", "--dump-params", (dir_ / "p1.bin").string()});
  const ProcessResult r2 = train(2, two);
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  const ProcessResult r1 = train(1, one);
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  const std::vector<float> p2 = read_floats(dir_ / "p2.bin");
  const std::vector<float> p1 = read_floats(dir_ / "p1.bin");
  ASSERT_EQ(p2.size(), p1.size());
  ASSERT_EQ(p1.size(), static_cast<std::size_t>(kSmallCnnParameters));
  EXPECT_LE(relative_distance(p2, p1), 1e-5) << "relative L2 distance of the final parameters";
}

}  // namespace
}  // namespace commsgd::testing
