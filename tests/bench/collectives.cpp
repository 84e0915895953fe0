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

void run(const Settings& s) {
  comm::MpiCommunicator comm;
  const std::size_t k = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(s.density * static_cast<double>(s.d))));
  std::vector<float> gradient(s.d);
  std::mt19937 rng(static_cast<unsigned>(comm.rank()) + 1);
  std::normal_distribution<float> normal;
  for (float& x : gradient) x = normal(rng);
  // Each rank proposes its own k entries, as after a real selection.
  kernels::SparseSet local;
  kernels::RandomSelector().select(gradient, k, 1000 + static_cast<std::uint64_t>(comm.rank()),
                                   local);
  std::vector<float> update(s.d);
  std::vector<std::uint8_t> applied;
  // A partner's set, as one round of gTop-k receives it: other indices, values alike.
  kernels::SparseSet partner, merged;
  kernels::RandomSelector().select(gradient, k, 2000 + static_cast<std::uint64_t>(comm.rank()),
                                   partner);

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
                             kernels::merge_keep_k(local, partner, k, merged);
                           }));
      results.emplace_back("sparse_write_update",
                           measure(comm, s.repeats, [&] { aggregation->write_update(update); }));
    }
  }
  if (comm.rank() != 0) return;

  fmt::print("P={} d={} density={} k={}  (median of {}, slowest rank)\n", comm.size(), s.d,
             s.density, k, s.repeats);
  fmt::print("{:<16} {:>12} {:>16}\n", "operation", "ms", "bytes sent/rank");
  const nlohmann::json params = {{"workers", comm.size()},
                                 {"d", s.d},
                                 {"density", s.density},
                                 {"k", k},
                                 {"repeats", s.repeats}};
  std::vector<record::BenchRow> rows;
  for (const auto& [name, m] : results) {
    fmt::print("{:<16} {:>12.3f} {:>16}\n", name, 1e3 * m.seconds, m.bytes_sent);
    rows.push_back(bench_row("collectives", name, params, m.seconds, "s"));
    rows.push_back(bench_row("collectives", name + "_bytes_sent", params,
                             static_cast<double>(m.bytes_sent), "bytes"));
  }
  record_bench(s.db, rows);
}

}  // namespace

void add_collectives(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "collectives", "Dense allreduce vs Top-k allgather vs gTop-k per step (run under mpirun)");
  cmd->add_option("--size", settings->d, "Gradient entries d")->capture_default_str();
  cmd->add_option("--density", settings->density, "Density ρ (k = ceil(ρ·d))")
      ->capture_default_str();
  cmd->add_option("--repeats", settings->repeats, "Repetitions (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--db", settings->db, "SQLite file for the bench rows")->capture_default_str();
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
