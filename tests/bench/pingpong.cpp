// pingpong: point-to-point time of a message between ranks 0 and 1 over a range of sizes, and
// the α-β model fitted to it by least squares: t(n) = α + β·n, one way. α and β per network are
// what the cost model of the sparse algorithms needs; 1/β is the link's bandwidth. Run under
// mpirun with the two ranks on the two hosts to measure (other ranks wait).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/stopwatch.hpp"
#include "analysis/record/run_database.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"

namespace commsgd::bench {
namespace {

struct Settings {
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = 4 << 20;
  int round_trips = 10;
  std::string network = "local";
  std::string db = "results/bench.sqlite";
};

struct Sample {
  std::size_t bytes = 0;
  double one_way_seconds = 0;  // half the median round trip
};

// Rank 0 sends `bytes` to rank 1, which sends them back; the median round trip over the repeats.
double median_round_trip(comm::Communicator& comm, std::size_t bytes, int round_trips) {
  std::vector<std::byte> message(bytes), echo;
  std::vector<double> times;
  for (int i = 0; i <= round_trips; ++i) {  // the first round trip sets up the connection
    const algorithms::Stopwatch watch;
    if (comm.rank() == 0) {
      comm.send(message.data(), bytes, 1);
      comm.receive(echo, 1);
    } else if (comm.rank() == 1) {
      comm.receive(echo, 0);
      comm.send(echo.data(), echo.size(), 0);
    }
    if (i > 0) times.push_back(watch.seconds());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Least-squares line through (bytes, seconds): returns {α, β}.
std::pair<double, double> fit_alpha_beta(const std::vector<Sample>& samples) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Sample& s : samples) {
    const double x = static_cast<double>(s.bytes);
    sx += x;
    sy += s.one_way_seconds;
    sxx += x * x;
    sxy += x * s.one_way_seconds;
  }
  const double n = static_cast<double>(samples.size());
  const double beta = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - beta * sx) / n, beta};
}

void run(const Settings& s) {
  comm::MpiCommunicator comm;
  if (comm.size() < 2) throw std::runtime_error("pingpong needs at least 2 ranks");
  std::vector<Sample> samples;
  for (std::size_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    comm.barrier();
    samples.push_back({bytes, median_round_trip(comm, bytes, s.round_trips) / 2});
  }
  comm.barrier();
  if (comm.rank() != 0) return;

  const auto [alpha, beta] = fit_alpha_beta(samples);
  const Sample& largest = samples.back();
  const double largest_mbit = 8e-6 * static_cast<double>(largest.bytes) / largest.one_way_seconds;
  fmt::print("rank 0 <-> rank 1, network {}, median of {} round trips\n", s.network, s.round_trips);
  fmt::print("{:>12} {:>12} {:>14}\n", "bytes", "one-way ms", "Mbit/s");
  for (const Sample& x : samples) {
    fmt::print("{:>12} {:>12.4f} {:>14.1f}\n", x.bytes, 1e3 * x.one_way_seconds,
               8e-6 * static_cast<double>(x.bytes) / x.one_way_seconds);
  }
  fmt::print(
      "alpha_s={:.6g} beta_s_per_byte={:.6g} fit_mbit_per_s={:.2f} largest_mbit_per_s={:.2f}\n",
      alpha, beta, 8e-6 / beta, largest_mbit);

  const nlohmann::json params = {{"network", s.network},
                                 {"min_bytes", s.min_bytes},
                                 {"max_bytes", s.max_bytes},
                                 {"round_trips", s.round_trips}};
  std::vector<record::BenchRow> rows = {
      bench_row("pingpong", "alpha", params, alpha, "s"),
      bench_row("pingpong", "beta", params, beta, "s/byte"),
      bench_row("pingpong", "largest_message_bandwidth", params, largest_mbit, "Mbit/s")};
  record::RunDatabase(s.db).add_bench(rows);
  fmt::print("recorded in {} (bench table)\n", s.db);
}

}  // namespace

void add_pingpong(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "pingpong", "Point-to-point time between ranks 0 and 1 and its α-β fit (run under mpirun)");
  cmd->add_option("--min-bytes", settings->min_bytes, "Smallest message")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-bytes", settings->max_bytes, "Largest message (sizes double up to it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--round-trips", settings->round_trips, "Round trips per size (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--network", settings->network, "Label of the network, stored with the rows")
      ->capture_default_str();
  cmd->add_option("--db", settings->db, "SQLite file for the bench rows")->capture_default_str();
  cmd->callback([settings] {
    if (settings->min_bytes > settings->max_bytes) {
      throw CLI::ValidationError("--min-bytes", "must not exceed --max-bytes");
    }
    run(*settings);
  });
}

}  // namespace commsgd::bench
