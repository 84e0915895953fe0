// trainer-overhead: per-iteration time of commsgd-train (--algo dense, one rank) against a bare
// LibTorch loop of the same model, batch and data, alternating the two in one process so both
// see the same machine state. Target (issue 2): ratio <= 1.05.
#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "algorithms/stopwatch.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "tests/bench/trainer_timing.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/models.hpp"
#include "trainer/trainer.hpp"

namespace commsgd::bench {
namespace {

using Settings = TimedTraining;

// The loop a LibTorch user would write: tensors in memory, index_select a batch, torch's SGD.
double bare_libtorch_seconds_per_iteration(const Settings& s, const trainer::Options& o) {
  data::DatasetOptions d;
  d.kind = "synthetic";
  d.synthetic_shape = {s.shape[0], s.shape[1], s.shape[2]};
  d.synthetic_train = static_cast<std::size_t>(o.synthetic_train);
  d.synthetic_val = static_cast<std::size_t>(o.synthetic_val);
  d.seed = o.seed;
  data::Dataset ds = data::load_dataset(d);
  const auto n = static_cast<std::int64_t>(ds.train.size());
  const torch::Tensor features =
      torch::from_blob(ds.train.features.data(), {n, s.shape[0], s.shape[1], s.shape[2]}).clone();
  const torch::Tensor labels =
      torch::from_blob(ds.train.labels.data(), {n}, torch::kInt32).to(torch::kInt64);

  torch::manual_seed(o.seed);
  auto model = trainer::make_model(
      {s.model, s.shape[0], s.shape[1], s.shape[2], ds.num_classes, o.mlp_hidden, {}, {}, {}});
  torch::optim::SGD optimizer(
      model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  const torch::Tensor order = torch::randperm(n);
  algorithms::Stopwatch clock;
  for (int i = 0; i < s.warmup + s.iterations; ++i) {
    if (i == s.warmup) clock.restart();
    const torch::Tensor index = order.narrow(0, i * s.batch_size, s.batch_size);
    const torch::Tensor x = features.index_select(0, index);
    const torch::Tensor y = labels.index_select(0, index);
    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(model->forward(x), y).backward();
    optimizer.step();
  }
  return clock.seconds() / s.iterations;
}

void run(const Settings& s) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / fmt::format("commsgd_bench_{}", getpid());
  const trainer::Options o = synthetic_training(s, scratch);
  at::set_num_threads(s.threads);
  std::vector<double> bare, ours;
  for (int r = 0; r < s.repeats; ++r) {
    bare.push_back(bare_libtorch_seconds_per_iteration(s, o));
    ours.push_back(seconds_per_iteration(o, s.warmup));
    fmt::print("repeat {}: bare LibTorch {:.2f} ms/iter, commsgd-train dense {:.2f} ms/iter\n",
               r + 1, 1e3 * bare.back(), 1e3 * ours.back());
  }
  std::filesystem::remove_all(scratch);
  const double ratio = median(ours) / median(bare);
  fmt::print(
      "model {} batch {} threads {}: median bare {:.2f} ms, commsgd {:.2f} ms, "
      "ratio {:.3f} (target <= 1.05)\n",
      s.model, s.batch_size, s.threads, 1e3 * median(bare), 1e3 * median(ours), ratio);

  const nlohmann::json params = params_of(s);
  const std::vector<record::BenchRow> rows = {
      bench_row("trainer-overhead", "bare_libtorch_iteration", params, median(bare), "s"),
      bench_row("trainer-overhead", "commsgd_dense_iteration", params, median(ours), "s"),
      bench_row("trainer-overhead", "commsgd_over_bare", params, ratio, "ratio")};
  record_bench(s.db, rows);
}

}  // namespace

void add_trainer_overhead(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "trainer-overhead",
      "Per-iteration time of commsgd-train --algo dense at P=1 over a bare LibTorch loop");
  add_timed_training_options(*cmd, *settings);
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
