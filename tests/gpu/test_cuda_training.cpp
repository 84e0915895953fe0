// commsgd-train --device cuda against --device cpu: the model computes on the GPU; an algorithm
// written for device buffers works on its flat buffers there (over NCCL, or staged over MPI when
// the ranks share a GPU), the others on host copies. Every case skips, saying why, where LibTorch
// sees no CUDA device (a CPU-only LibTorch, or no GPU), but --device auto's, which checks that it
// takes the GPU where there is one and the CPU elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

struct Case {
  std::string algo;
  std::string model;
  // Relative L2 distance allowed between the GPU's and the CPU's final parameters: the GPU sums
  // in other orders, and a sparse selection or a gossip mix can carry a rounding difference
  // further than a dense step does.
  double tolerance;
  bool on_device = true;  // works on device buffers (else: host copies over MPI)
  std::vector<std::string> options = {};
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.algo << " on " << c.model;
}

class CudaTraining : public TrainerRuns, public ::testing::WithParamInterface<Case> {};

TEST_P(CudaTraining, FollowsTheCpuTrajectory) {
  const Case& c = GetParam();
  // 2 ranks: with one GPU both share it (--device cuda takes the node-local rank modulo the GPUs).
  // resnet20 has batch norm, so its running statistics travel between device and host too. Two
  // threads a rank: the check runs shards of these side by side.
  std::vector<std::string> common = {
      "--algo",   c.algo,         "--model",   c.model, "--max-steps", "12",     "--epochs",
      "1",        "--batch-size", "16",        "--lr",  "0.05",        "--seed", "5",
      "--db-dir", dir_.string(),  "--density", "0.01",  "--log-every", "4",    "--threads",
      "2"};
  common.insert(common.end(), c.options.begin(), c.options.end());
  if (c.model == "mlp") {
    common.insert(common.end(), {"--dataset", "csv", "--data-path", COMMSGD_DIGITS_CSV});
  } else {
    common.insert(common.end(), {"--dataset", "synthetic", "--synthetic-train", "512"});
  }
  // --no-tf32: cuDNN's default TF32 convolutions alone would move resnet20 by about 1e-3.
  auto gpu = common;
  gpu.insert(gpu.end(), {"--device", "cuda", "--no-tf32", "--db", (dir_ / "gpu.sqlite").string(),
                         "--dump-params", (dir_ / "gpu.bin").string()});
  const ProcessResult on_gpu = train(2, gpu);
  if (on_gpu.exit_code == 2 && on_gpu.output.find("sees no CUDA device") != std::string::npos) {
    GTEST_SKIP() << "no CUDA device: " << on_gpu.output;
  }
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.output;
  auto cpu = common;
  cpu.insert(cpu.end(), {"--device", "cpu", "--dump-params", (dir_ / "cpu.bin").string()});
  const ProcessResult on_cpu = train(2, cpu);
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.output;

  const std::vector<float> g = read_floats(dir_ / "gpu.bin");
  const std::vector<float> p = read_floats(dir_ / "cpu.bin");
  ASSERT_EQ(g.size(), p.size());
  ASSERT_GT(p.size(), 0u);
  EXPECT_LE(relative_distance(g, p), c.tolerance) << "relative L2 distance of the final parameters";

  const auto runs = query(dir_ / "gpu.sqlite", "SELECT device, status, backend FROM runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "cuda:0");
  EXPECT_EQ(runs[0][1], "completed");
  if (c.on_device) {
    EXPECT_TRUE(runs[0][2] == "nccl" || runs[0][2] == "mpi-staged") << runs[0][2];
  } else {
    EXPECT_EQ(runs[0][2], "mpi");
  }
}

// Two ranks told to drive one GPU by its index are refused before NCCL sees them (it would end
// them with "Duplicate GPU detected"); --device cuda lets ranks beyond the GPUs share them.
TEST_F(TrainerRuns, OneGpuIndexForTwoRanksOfANodeIsRefused) {
  const ProcessResult run =
      train(2, {"--algo", "dense", "--model", "mlp", "--max-steps", "2", "--dataset", "csv",
                "--data-path", COMMSGD_DIGITS_CSV, "--db-dir", dir_.string(), "--device",
                "cuda:0"});
  if (run.exit_code == 2 && run.output.find("sees no CUDA device") != std::string::npos) {
    GTEST_SKIP() << "no CUDA device: " << run.output;
  }
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--device cuda:0: ranks 0 and 1 would drive one GPU (GPU-"),
            std::string::npos)
      << run.output;
}

// NCCL moves device buffers past the host calls --emulate-link-mbps slows: one rank that owns its
// GPU takes NCCL, and the staged back end once a link is emulated.
TEST_F(TrainerRuns, AnEmulatedLinkTakesDeviceBuffersThroughTheHost) {
  const std::vector<std::string> common = {
      "--algo",    "dense", "--model",     "mlp", "--max-steps", "4",          "--dataset",
      "csv",       "--data-path", COMMSGD_DIGITS_CSV, "--device", "cuda", "--threads", "2",
      "--db-dir",  dir_.string()};
  auto emulated = common;
  emulated.insert(emulated.end(), {"--emulate-link-mbps", "1000", "--db",
                                   (dir_ / "emulated.sqlite").string()});
  const ProcessResult run = train(1, emulated);
  if (run.exit_code == 2 && run.output.find("sees no CUDA device") != std::string::npos) {
    GTEST_SKIP() << "no CUDA device: " << run.output;
  }
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(query(dir_ / "emulated.sqlite", "SELECT backend FROM runs"),
            (std::vector<std::vector<std::string>>{{"mpi-staged"}}));
}

// What --device auto should resolve to here, as commsgd-train --check-build reports the build and
// the node: cuda with the CUDA kernels built (the device path comes with them) and a GPU that
// LibTorch sees, else cpu.
std::string auto_device_here() {
  const ProcessResult report =
      run_process(mpirun(1, {COMMSGD_TRAIN, "--check-build"}), std::chrono::seconds(60));
  EXPECT_EQ(report.exit_code, 0) << report.output;
  const std::string gpus_line = "GPUs LibTorch sees: ";
  const std::size_t gpus = report.output.find(gpus_line);
  EXPECT_NE(gpus, std::string::npos) << report.output;
  const bool gpu_visible =
      gpus != std::string::npos && std::stoi(report.output.substr(gpus + gpus_line.size())) > 0;
  const bool cuda_built = report.output.find("CUDA kernels: built\n") != std::string::npos;
  return cuda_built && gpu_visible ? "cuda" : "cpu";
}

// --device auto (the default) trains where auto resolves to on every rank, records that device
// in the runs table and the resolved option in the run's config, and computes what that device
// given outright does: bit for bit on the CPU, as this machine without a GPU shows.
TEST_F(TrainerRuns, AutoTrainsOnTheGpuWhereThereIsOneElseOnTheCpu) {
  const std::string expected = auto_device_here();
  const std::vector<std::string> common = {
      "--algo",      "dense", "--model",      "mlp", "--max-steps", "12",
      "--epochs",    "1",     "--batch-size", "16",  "--lr",        "0.05",
      "--seed",      "5",     "--dataset",    "csv", "--data-path", COMMSGD_DIGITS_CSV,
      "--log-every", "4"};
  auto automatic = common;
  automatic.insert(automatic.end(), {"--device", "auto", "--db", (dir_ / "auto.sqlite").string(),
                                     "--dump-params", (dir_ / "auto.bin").string()});
  const ProcessResult by_auto = train(2, automatic);
  ASSERT_EQ(by_auto.exit_code, 0) << by_auto.output;
  auto outright = common;
  outright.insert(outright.end(), {"--device", expected, "--db", (dir_ / "given.sqlite").string(),
                                   "--dump-params", (dir_ / "given.bin").string()});
  const ProcessResult by_name = train(2, outright);
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;

  const auto runs = query(dir_ / "auto.sqlite",
                          "SELECT device, status, json_extract(config, '$.device') FROM runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], expected == "cuda" ? "cuda:0" : "cpu");
  EXPECT_EQ(runs[0][1], "completed");
  EXPECT_EQ(runs[0][2], expected) << "the config records the device auto resolved to";
  const std::vector<float> a = read_floats(dir_ / "auto.bin");
  const std::vector<float> g = read_floats(dir_ / "given.bin");
  ASSERT_EQ(a.size(), g.size());
  ASSERT_GT(a.size(), 0u);
  if (expected == "cpu") {
    EXPECT_TRUE(a == g) << "--device auto on the CPU is --device cpu, bit for bit";
  } else {
    EXPECT_LE(relative_distance(a, g), 1e-4) << "relative L2 distance of the final parameters";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, CudaTraining,
    ::testing::Values(Case{"dense", "mlp", 1e-4}, Case{"dense", "resnet20", 1e-3},
                      Case{"topk", "mlp", 1e-2}, Case{"gtopk", "mlp", 1e-2},
                      Case{"gaussiank", "mlp", 1e-2}, Case{"dpsgd", "mlp", 1e-3},
                      Case{"sgp", "resnet20", 1e-2}, Case{"osgp", "mlp", 1e-2},
                      // Batch-norm statistics shared at the epoch's end while an exchange may
                      // be in flight on the communication thread's communicator.
                      Case{"osgp", "resnet20", 1e-2},
                      // Asynchronous: its mixes land when the threads get to them.
                      Case{"adpsgd", "mlp", 5e-2},
                      // A study looks at the accumulated gradient on the host: staged.
                      Case{"topk", "mlp", 1e-2, false, {"--grad-stats-every", "4"}},
                      // A sign, or a level drawn against a threshold, that a last bit of the
                      // gradient flips moves its entry by a whole step.
                      Case{"signsgd", "mlp", 5e-2}, Case{"ef-signsgd", "mlp", 5e-2},
                      Case{"qsgd", "mlp", 5e-2}, Case{"powersgd", "mlp", 1e-2},
                      // A norm study reads the host's gradient: staged.
                      Case{"qsgd", "mlp", 5e-2, false, {"--norm-study-every", "4"}}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name =
          info.param.algo + "_" + info.param.model + (info.param.on_device ? "" : "_staged");
      std::replace(name.begin(), name.end(), '-', '_');  // a C identifier: ef_signsgd_mlp
      return name;
    });

}  // namespace
}  // namespace commsgd::testing
