#include "tests/bench/selection_bench.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <random>

namespace commsgd::bench {

void add_selection_options(CLI::App& cmd, SelectionSettings& settings) {
  cmd.add_option("--sizes", settings.sizes, "Vector lengths d")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--densities", settings.densities, "Densities ρ in (0, 1] (k = ceil(ρ·d))")
      ->delimiter(',')
      ->check(CLI::Range(1e-12, 1.0))
      ->capture_default_str();
  cmd.add_option("--repeats", settings.repeats, "Interleaved repeats (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--db", settings.db, "SQLite file for the bench rows")->capture_default_str();
}

std::vector<float> normal_data(std::size_t d) {
  std::mt19937 rng(20240501);
  std::normal_distribution<float> normal;
  std::vector<float> x(d);
  for (float& v : x) v = normal(rng);
  return x;
}

}  // namespace commsgd::bench
