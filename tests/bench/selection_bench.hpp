#pragma once

// What the CPU and GPU selector benchmarks (kernels, gpu-kernels) share: their options, their
// data and how they summarize repeats.

#include <CLI/App.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace commsgd::bench {

struct SelectionSettings {
  std::vector<std::size_t> sizes = {1'000'000, 25'000'000};
  std::vector<double> densities = {0.001, 0.01};
  int repeats = 5;
  std::string db = "results/bench.sqlite";
};

// One contender, timed once per interleaved repeat.
struct Candidate {
  std::string name;
  std::function<void()> run;
  std::vector<double> seconds;
};

// --sizes, --densities, --repeats and --db on `cmd`.
void add_selection_options(CLI::App& cmd, SelectionSettings& settings);

// d draws of N(0, 1), the same for every benchmark and run.
std::vector<float> normal_data(std::size_t d);

}  // namespace commsgd::bench
