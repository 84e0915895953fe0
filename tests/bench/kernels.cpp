// kernels: single-thread time of the sparse selectors on N(0,1) data, against the one-pass floor
// (count_abs_greater at the exact k-th threshold: one read of x, which any selector must do) and
// torch::topk(x.abs(), k) on the same buffer, interleaved per repeat so all see the same machine
// state. Targets at d = 25M, ρ = 0.001: exact <= 4x floor and >= 10x faster than torch::topk,
// gaussian <= 3x floor.
#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "algorithms/stopwatch.hpp"
#include "kernels/sampling.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "tests/bench/selection_bench.hpp"

namespace commsgd::bench {
namespace {

void run(const SelectionSettings& s) {
  at::set_num_threads(1);
  std::vector<record::BenchRow> rows;
  fmt::print("{:>10} {:>7} {:>7} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} | {:>11} {:>14} {:>11}\n",
             "d", "density", "k", "floor", "exact", "gaussian", "dgc", "random", "torch",
             "exact/floor", "gaussian/floor", "torch/exact");
  for (const std::size_t d : s.sizes) {
    std::vector<float> x = normal_data(d);
    const torch::Tensor tensor = torch::from_blob(x.data(), {static_cast<std::int64_t>(d)});
    for (const double density : s.densities) {
      const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(density * d)));
      kernels::TopkSelector topk;
      kernels::GaussianSelector gaussian;
      kernels::DgcSelector dgc;
      kernels::RandomSelector random;
      kernels::SparseSet out;
      topk.select(x, k, out);
      float kth = std::abs(out.values[0]);
      for (const float v : out.values) kth = std::min(kth, std::abs(v));
      std::uint64_t seed = 0;
      std::vector<Candidate> candidates = {
          {"floor", [&] { kernels::count_abs_greater(x, kth); }, {}},
          {"exact", [&] { topk.select(x, k, out); }, {}},
          {"gaussian", [&] { gaussian.select(x, k, density, out); }, {}},
          {"dgc", [&] { dgc.select(x, k, out); }, {}},
          {"random", [&] { random.select(x, k, ++seed, out); }, {}},
          {"torch_topk", [&] { torch::topk(tensor.abs(), static_cast<std::int64_t>(k)); }, {}}};
      for (int r = 0; r < s.repeats; ++r) {
        for (Candidate& c : candidates) {
          const algorithms::Stopwatch watch;
          c.run();
          c.seconds.push_back(watch.seconds());
        }
      }
      const nlohmann::json params = {
          {"d", d}, {"density", density}, {"k", k}, {"threads", 1}, {"repeats", s.repeats}};
      std::map<std::string, double> ms;
      for (const Candidate& c : candidates) {
        rows.push_back(bench_row("kernels", c.name, params, median(c.seconds), "s"));
        ms[c.name] = 1e3 * median(c.seconds);
      }
      const double exact_over_floor = ms["exact"] / ms["floor"],
                   gaussian_over_floor = ms["gaussian"] / ms["floor"],
                   torch_over_exact = ms["torch_topk"] / ms["exact"];
      rows.push_back(bench_row("kernels", "exact_over_floor", params, exact_over_floor, "ratio"));
      rows.push_back(
          bench_row("kernels", "gaussian_over_floor", params, gaussian_over_floor, "ratio"));
      rows.push_back(bench_row("kernels", "torch_over_exact", params, torch_over_exact, "ratio"));
      fmt::print(
          "{:>10} {:>7} {:>7} | {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>9.3f} | {:>11.2f} "
          "{:>14.2f} {:>11.1f}\n",
          d, density, k, ms["floor"], ms["exact"], ms["gaussian"], ms["dgc"], ms["random"],
          ms["torch_topk"], exact_over_floor, gaussian_over_floor, torch_over_exact);
    }
  }
  fmt::print("times in ms, median of {} interleaved repeats, one thread\n", s.repeats);
  record_bench(s.db, rows);
}

}  // namespace

void add_kernels(CLI::App& app) {
  auto settings = std::make_shared<SelectionSettings>();
  CLI::App* cmd = app.add_subcommand(
      "kernels", "Sparse selectors against the one-pass floor and torch::topk, one thread");
  add_selection_options(*cmd, *settings);
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
