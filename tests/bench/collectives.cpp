// collectives: time per step of the three ways the synchronous algorithms move a gradient — dense
// allreduce of d floats, Top-k's allgather of k entries, gTop-k's butterfly — with the bytes
// each rank put on the wire. Run under mpirun (e.g. -np 2, 4, 8); rank 0 records.
#include <fmt/core.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/stopwatch.hpp"
#include "kernels/sampling.hpp"
#include "kernels/simd_path.hpp"
#include "kernels/sparse_ops.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"

namespace commsgd::bench {
namespace {

struct Settings {
  std::size_t d = 25'000'000;
  double density = 0.001;
  int repeats = 5;
  std::string db = "results/bench.sqlite";
};

struct Measurement {
  double seconds = 0;
  std::uint64_t bytes_sent = 0;
};

// Median time of `op` over the repeats, each started together on every rank; the slowest rank's
// time counts, as the step waits for it.
template <class Op>
Measurement measure(comm::Communicator& comm, int repeats, Op&& op) {
  std::vector<double> times;
  std::uint64_t bytes = 0;
  for (int i = 0; i < repeats; ++i) {
    comm.barrier();
    const std::uint64_t before = comm.counters().bytes_sent;
    const algorithms::Stopwatch watch;
    op();
    double t = watch.seconds();
    bytes = comm.counters().bytes_sent - before;
    comm.allreduce(std::span(&t, 1), comm::ReduceOp::max);
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], bytes};
}

// What each rank exchanges: a gradient of d N(0, 1) entries, its own k of them (as after a real
// selection), and a partner's k, as one round of gTop-k receives them (other indices, values
// alike).
struct Gradient {
  std::size_t k;
  std::vector<float> dense;
  kernels::SparseSet local, partner;

  Gradient(const Settings& s, int rank)
      : k(std::max<std::size_t>(
            1, static_cast<std::size_t>(std::ceil(s.density * static_cast<double>(s.d))))),
        dense(s.d) {
    std::mt19937 rng(static_cast<unsigned>(rank) + 1);
    std::normal_distribution<float> normal;
    for (float& x : dense) x = normal(rng);
    kernels::RandomSelector().select(dense, k, 1000 + static_cast<std::uint64_t>(rank), local);
    kernels::RandomSelector().select(dense, k, 2000 + static_cast<std::uint64_t>(rank), partner);
  }
};

nlohmann::json params_of(const Settings& s, int workers, std::size_t k) {
  return {
      {"workers", workers}, {"d", s.d}, {"density", s.density}, {"k", k}, {"repeats", s.repeats}};
}

void run(const Settings& s) {
  comm::MpiCommunicator comm;
  Gradient g(s, comm.rank());
  const std::size_t k = g.k;
  std::vector<float>& gradient = g.dense;
  const kernels::SparseSet& local = g.local;
  std::vector<float> update(s.d);
  std::vector<std::uint8_t> applied;
  kernels::SparseSet merged;

  std::vector<std::pair<std::string, Measurement>> results;
  results.emplace_back("dense_allreduce", measure(comm, s.repeats, [&] {
                         comm.allreduce(std::span(gradient), comm::ReduceOp::sum);
                       }));
  // The exchange alone, as the trainer's communicate_s; writing U densely is one pass over d
  // whichever the aggregation, measured once.
  for (const std::string name : {"allgather", "gtopk"}) {
    algorithms::AlgorithmConfig config;
    config.aggregation = name;
    auto aggregation = algorithms::make_aggregation(config, comm);
    results.emplace_back(
        name == "allgather" ? "topk_allgather" : "gtopk",
        measure(comm, s.repeats, [&] { aggregation->exchange(local, k, applied); }));
    if (name == "gtopk") {
      // One round's merge alone, without the transfer: the software cost of a round.
      results.emplace_back("gtopk_merge", measure(comm, s.repeats, [&] {
                             kernels::merge_keep_k(local, g.partner, k, merged);
                           }));
      results.emplace_back("sparse_write_update",
                           measure(comm, s.repeats, [&] { aggregation->write_update(update); }));
    }
  }
  if (comm.rank() != 0) return;

  fmt::print("P={} d={} density={} k={}  (median of {}, slowest rank)\n", comm.size(), s.d,
             s.density, k, s.repeats);
  fmt::print("{:<16} {:>12} {:>16}\n", "operation", "ms", "bytes sent/rank");
  const nlohmann::json params = params_of(s, comm.size(), k);
  std::vector<record::BenchRow> rows;
  for (const auto& [name, m] : results) {
    fmt::print("{:<16} {:>12.3f} {:>16}\n", name, 1e3 * m.seconds, m.bytes_sent);
    rows.push_back(bench_row("collectives", name, params, m.seconds, "s"));
    rows.push_back(bench_row("collectives", name + "_bytes_sent", params,
                             static_cast<double>(m.bytes_sent), "bytes"));
  }
  record_bench(s.db, rows);
}

// merge-paths: gTop-k's exchange on each SIMD path of its merge this CPU has
// (kernels/simd_path.hpp), against Top-k's allgather of the same k entries, in one process:
// each repeat runs the allgather, then the exchange on every path, so that the machine's drift
// falls on all of them alike.
void run_merge_paths(const Settings& s) {
  comm::MpiCommunicator comm;
  const Gradient g(s, comm.rank());
  const std::vector<kernels::SimdPath> paths = kernels::merge_simd_paths();
  std::vector<std::uint8_t> applied;
  algorithms::AlgorithmConfig config;
  config.aggregation = "allgather";
  auto allgather = algorithms::make_aggregation(config, comm);
  config.aggregation = "gtopk";
  auto gtopk = algorithms::make_aggregation(config, comm);
  std::vector<double> allgather_times;
  std::vector<std::vector<double>> gtopk_times(paths.size());
  for (int r = 0; r < s.repeats; ++r) {
    allgather_times.push_back(
        measure(comm, 1, [&] { allgather->exchange(g.local, g.k, applied); }).seconds);
    for (std::size_t p = 0; p < paths.size(); ++p) {
      kernels::use_merge_simd_path(paths[p]);
      gtopk_times[p].push_back(
          measure(comm, 1, [&] { gtopk->exchange(g.local, g.k, applied); }).seconds);
    }
  }
  if (comm.rank() != 0) return;

  fmt::print("P={} d={} density={} k={}  (median of {}, slowest rank)\n", comm.size(), s.d,
             s.density, g.k, s.repeats);
  fmt::print("{:<28} {:>10} {:>14}\n", "operation", "ms", "over allgather");
  const double allgather_s = median(allgather_times);
  fmt::print("{:<28} {:>10.3f}\n", "topk_allgather", 1e3 * allgather_s);
  std::vector<record::BenchRow> rows;
  nlohmann::json params = params_of(s, comm.size(), g.k);
  rows.push_back(bench_row("merge_paths", "topk_allgather", params, allgather_s, "s"));
  for (std::size_t p = 0; p < paths.size(); ++p) {
    const double gtopk_s = median(gtopk_times[p]);
    const std::string name = kernels::name_of(paths[p]);
    fmt::print("{:<28} {:>10.3f} {:>14.2f}\n", "gtopk, merge " + name, 1e3 * gtopk_s,
               gtopk_s / allgather_s);
    params["merge_path"] = name;
    rows.push_back(bench_row("merge_paths", "gtopk", params, gtopk_s, "s"));
    rows.push_back(
        bench_row("merge_paths", "gtopk_over_allgather", params, gtopk_s / allgather_s, "ratio"));
  }
  record_bench(s.db, rows);
}

void add_options(CLI::App* cmd, Settings& settings) {
  cmd->add_option("--size", settings.d, "Gradient entries d")->capture_default_str();
  cmd->add_option("--density", settings.density, "Density ρ (k = ceil(ρ·d))")
      ->capture_default_str();
  cmd->add_option("--repeats", settings.repeats, "Repetitions (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--db", settings.db, "SQLite file for the bench rows")->capture_default_str();
}

}  // namespace

void add_collectives(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "collectives", "Dense allreduce vs Top-k allgather vs gTop-k per step (run under mpirun)");
  add_options(cmd, *settings);
  cmd->callback([settings] { run(*settings); });

  auto paths_settings = std::make_shared<Settings>();
  CLI::App* paths = app.add_subcommand(
      "merge-paths",
      "gTop-k's exchange with each SIMD path of its merge this CPU has, against Top-k's "
      "allgather, alternated in one run (run under mpirun)");
  add_options(paths, *paths_settings);
  paths->callback([paths_settings] { run_merge_paths(*paths_settings); });
}

}  // namespace commsgd::bench
