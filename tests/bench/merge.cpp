// merge: one thread's time for one merge of gTop-k's round (merge_keep_k of two sets of k
// entries, carrying the tags a round before the last carries), by k, each right after
// computation as in a training step: the sets were just written (a selection, a receive), while
// the merge's code and branch history have gone cold, which makes a small merge take several
// times what merging the same sets again and again does (results/costmodel/README.md).
// commsgd-report simulate adds this time to each of gTop-k's rounds: the software cost its α-β
// terms leave out. The last round merges without tags and marks its own entries instead, a little
// faster at large k and the same at the k of the cost model's check runs; the model prices it as
// the others.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <numeric>
#include <random>

#include "algorithms/stopwatch.hpp"
#include "kernels/sparse_ops.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"

namespace commsgd::bench {
namespace {

struct Settings {
  std::size_t min_k = 64;
  std::size_t max_k = 1 << 17;
  int repeats = 21;
  double idle_ms = 1;
  int compute_hidden = kComputeHidden;
  std::string db = "results/bench.sqlite";
};

// A rank's k entries at density 0.001: one index in each run of 1000, N(0, 1) values. Two such
// sets share an index about once in a thousand entries.
void random_set(std::mt19937& rng, std::size_t k, kernels::SparseSet& set) {
  std::uniform_int_distribution<std::uint32_t> offset(0, 999);
  std::normal_distribution<float> normal;
  set.indices.resize(k);
  set.values.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    set.indices[i] = static_cast<std::uint32_t>(1000 * i) + offset(rng);
    set.values[i] = normal(rng);
  }
}

void run(const Settings& s) {
  std::mt19937 rng(1);
  kernels::SparseSet own, partner, merged;
  std::vector<std::uint32_t> merged_tags;
  const nlohmann::json params = {
      {"idle_ms", s.idle_ms}, {"repeats", s.repeats}, {"compute_hidden", s.compute_hidden}};
  std::vector<record::BenchRow> rows;
  fmt::print(
      "gTop-k's merge of two sets of k entries after {} ms of computation (MLP 64-{}-10), median "
      "of {}\n",
      s.idle_ms, s.compute_hidden, s.repeats);
  fmt::print("{:>8} {:>12} {:>14}\n", "k", "us", "ns per entry");
  std::vector<std::pair<std::size_t, double>> times;
  for (std::size_t k = s.min_k; k <= s.max_k; k *= 2) {
    // The round's tags: positions on this rank's side, kUntagged on the partner's.
    std::vector<std::uint32_t> positions(k), untagged(k, kernels::kUntagged);
    std::iota(positions.begin(), positions.end(), 0u);
    std::vector<double> seconds;
    for (int i = 0; i <= s.repeats; ++i) {
      const float computed = compute_for(s.idle_ms / 1e3, s.compute_hidden);
      random_set(rng, k, own);
      random_set(rng, k, partner);
      own.values[0] = computed;  // the computation is used
      const algorithms::Stopwatch watch;
      kernels::merge_keep_k(own, positions, partner, untagged, k, merged, merged_tags);
      if (i > 0) seconds.push_back(watch.seconds());  // the first allocates the output
    }
    times.emplace_back(k, median(seconds));
    fmt::print("{:>8} {:>12.2f} {:>14.2f}\n", k, 1e6 * times.back().second,
               1e9 * times.back().second / static_cast<double>(k));
    nlohmann::json sized = params;
    sized["k"] = k;
    rows.push_back(bench_row("merge", "gtopk_merge_seconds", sized, times.back().second, "s"));
  }
  // Beyond the sizes measured: the line through the smallest and the largest.
  const auto [k0, t0] = times.front();
  const auto [k1, t1] = times.back();
  const double per_entry = k1 > k0 ? (t1 - t0) / static_cast<double>(k1 - k0) : 0;
  const double fixed = t0 - per_entry * static_cast<double>(k0);
  fmt::print("gtopk_merge_alpha_s={:.6g} gtopk_merge_beta_s_per_entry={:.6g}\n", fixed, per_entry);
  rows.push_back(bench_row("merge", "gtopk_merge_alpha", params, fixed, "s"));
  rows.push_back(bench_row("merge", "gtopk_merge_beta", params, per_entry, "s/entry"));
  record_bench(s.db, rows);
}

}  // namespace

void add_merge(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "gTop-k's merge of two sets of k entries after computation, by k, one thread (the software "
      "cost of a round, for commsgd-report simulate)");
  cmd->add_option("--min-k", settings->min_k, "Smallest k")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-k", settings->max_k, "Largest k (k doubles up to it)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 22))
      ->capture_default_str();
  cmd->add_option("--repeats", settings->repeats, "Merges per k (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--idle-ms", settings->idle_ms,
                  "Computation before each merge, as a training step's forward and backward")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_compute_hidden_option(*cmd, settings->compute_hidden);
  cmd->add_option("--db", settings->db, "SQLite file for the bench rows")->capture_default_str();
  cmd->callback([settings] {
    if (settings->min_k > settings->max_k) {
      throw CLI::ValidationError("--min-k", "must not exceed --max-k");
    }
    run(*settings);
  });
}

}  // namespace commsgd::bench
