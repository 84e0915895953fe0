// What the benchmarks that time commsgd-train itself share: their settings and options, and a run
// on synthetic data in this process (one rank, MPI_COMM_SELF), timed per iteration after a
// warm-up.
#pragma once

#include <CLI/App.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainer/models.hpp"
#include "trainer/options.hpp"

namespace commsgd::bench {

struct TimedTraining {
  std::string model = "resnet20";
  std::vector<int> shape = {3, 32, 32};  // C, H, W of the synthetic samples
  int batch_size = 32;
  int warmup = 5;
  int iterations = 30;
  int repeats = 3;  // alternations of what is compared; the medians are compared
  int threads = 1;
  std::string db = "results/bench.sqlite";
};

// --model, --shape, --batch-size, --warmup, --iterations, --repeats, --threads and --db.
void add_timed_training_options(CLI::App& cmd, TimedTraining& s);
// The settings, as a bench row's params.
nlohmann::json params_of(const TimedTraining& s);

// --algo dense on warmup + iterations batches of synthetic samples, one epoch, quiet, recorded
// under `scratch`.
trainer::Options synthetic_training(const TimedTraining& s, const std::filesystem::path& scratch);
// The number of parameters of the model `spec` builds.
std::size_t parameter_count(const trainer::ModelSpec& spec);
// Trains `o` and returns the mean seconds per iteration after the first `warmup`.
double seconds_per_iteration(const trainer::Options& o, int warmup);

}  // namespace commsgd::bench
