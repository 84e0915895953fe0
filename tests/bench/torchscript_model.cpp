// torchscript-model: a network exported from Python (tools/export_torchscript.py) against the
// same network built in C++: parameter counts, and per-iteration time of commsgd-train --algo
// dense at P=1 on each, alternated in one process so both see the same machine state. Target
// (issue 24, ResNet-20): the same parameter count, and a time ratio within 10% of 1.
#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "tests/bench/trainer_timing.hpp"
#include "trainer/models.hpp"

namespace commsgd::bench {
namespace {

struct Settings : TimedTraining {
  std::string model_file;
};

void run(const Settings& s) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / fmt::format("commsgd_bench_{}", getpid());
  const trainer::Options built_in = synthetic_training(s, scratch);
  trainer::Options loaded = built_in;
  loaded.model = "torchscript";
  loaded.model_file = s.model_file;
  at::set_num_threads(s.threads);

  trainer::ModelSpec spec{s.model, s.shape[0], s.shape[1], s.shape[2], 10, {}, {}, {}, {}};
  const std::size_t built_in_parameters = parameter_count(spec);
  spec.name = "torchscript";
  spec.file = s.model_file;
  const std::size_t loaded_parameters = parameter_count(spec);

  std::vector<double> ours, theirs;
  for (int r = 0; r < s.repeats; ++r) {
    ours.push_back(seconds_per_iteration(built_in, s.warmup));
    theirs.push_back(seconds_per_iteration(loaded, s.warmup));
    fmt::print("repeat {}: built-in {} {:.2f} ms/iter, TorchScript {:.2f} ms/iter\n", r + 1,
               s.model, 1e3 * ours.back(), 1e3 * theirs.back());
  }
  std::filesystem::remove_all(scratch);
  const double ratio = median(theirs) / median(ours);
  fmt::print(
      "{} batch {} threads {}: parameters built-in {}, TorchScript {}; median built-in {:.2f} ms, "
      "TorchScript {:.2f} ms, ratio {:.3f} (target: equal counts, ratio within 0.90..1.10)\n",
      s.model, s.batch_size, s.threads, built_in_parameters, loaded_parameters, 1e3 * median(ours),
      1e3 * median(theirs), ratio);

  nlohmann::json params = params_of(s);
  params["model_file"] = s.model_file;
  const auto count = [](std::size_t n) { return static_cast<double>(n); };
  record_bench(
      s.db, {bench_row("torchscript-model", "built_in_parameters", params,
                       count(built_in_parameters), "count"),
             bench_row("torchscript-model", "torchscript_parameters", params,
                       count(loaded_parameters), "count"),
             bench_row("torchscript-model", "built_in_iteration", params, median(ours), "s"),
             bench_row("torchscript-model", "torchscript_iteration", params, median(theirs), "s"),
             bench_row("torchscript-model", "torchscript_over_built_in", params, ratio, "ratio")});
}

}  // namespace

void add_torchscript_model(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "torchscript-model",
      "A TorchScript export of a built-in model against the built-in one: parameters, and "
      "commsgd-train's time per iteration on each");
  add_timed_training_options(*cmd, *settings);
  cmd->add_option("--model-file", settings->model_file,
                  "The TorchScript export of --model (tools/export_torchscript.py)")
      ->required();
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
