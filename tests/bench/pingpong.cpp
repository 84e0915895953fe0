// pingpong: point-to-point time of a message between ranks 0 and 1 over a range of sizes, one way
// and exchanged both ways at once, and the α-β model t(n) = α + β·n fitted to each. α and β per
// network are what the cost model needs (1/β is the link's bandwidth), and the exchange's time at
// each size, by which it prices messages within the measured sizes. Run under mpirun with the two
// ranks on the two hosts to measure (other ranks wait).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <span>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/stopwatch.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"

namespace commsgd::bench {
namespace {

struct Settings {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 4 << 20;
  int round_trips = 10;
  std::string network = "local";
  std::string db = "results/bench.sqlite";
};

struct Sample {
  std::size_t bytes = 0;
  double one_way_seconds = 0;  // half the median round trip
};

// The median over the repeats of `once()`'s time; the first run sets up the connection.
template <class Once>
double median_time(int repeats, Once once) {
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    const algorithms::Stopwatch watch;
    once();
    if (i > 0) times.push_back(watch.seconds());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Rank 0 sends `bytes` to rank 1, which sends them back: half the median round trip.
double one_way_seconds(comm::Communicator& comm, std::size_t bytes, int round_trips) {
  std::vector<std::byte> message(bytes), echo;
  return median_time(round_trips,
                     [&] {
                       if (comm.rank() == 0) {
                         comm.send(message.data(), bytes, 1);
                         comm.receive(echo, 1);
                       } else if (comm.rank() == 1) {
                         comm.receive(echo, 0);
                         comm.send(echo.data(), echo.size(), 0);
                       }
                     }) /
         2;
}

// Ranks 0 and 1 send each other `bytes` at once, as every collective and gossip exchange does:
// the link carries data both ways, and each direction's acknowledgements queue behind the other's
// data, which a one-way ping-pong never sees.
double exchange_seconds(comm::Communicator& comm, std::size_t bytes, int repeats) {
  std::vector<std::byte> message(bytes), received;
  return median_time(repeats, [&] {
    if (comm.rank() < 2) comm.exchange(message.data(), bytes, 1 - comm.rank(), received);
  });
}

// {α, β} of t(n) = α + β·n. One least-squares line through all sizes fits neither end: a
// shaped link lets messages up to its token-bucket burst pass at full speed, and the large
// messages' scatter then decides α (it can come out negative). So α is the time of the smallest
// message, where latency is all there is, and β the least-squares slope over the larger half of
// the sizes, where bandwidth is.
std::pair<double, double> fit_alpha_beta(const std::vector<Sample>& samples) {
  const std::span<const Sample> large = std::span(samples).subspan(samples.size() / 2);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Sample& s : large) {
    const double x = static_cast<double>(s.bytes);
    sx += x;
    sy += s.one_way_seconds;
    sxx += x * x;
    sxy += x * s.one_way_seconds;
  }
  const double n = static_cast<double>(large.size());
  const double beta = large.size() > 1
                          ? (n * sxy - sx * sy) / (n * sxx - sx * sx)
                          : large[0].one_way_seconds / static_cast<double>(large[0].bytes);
  return {samples.front().one_way_seconds, beta};
}

void print_samples(const std::string& what, const std::vector<Sample>& samples) {
  fmt::print("{}\n{:>12} {:>12} {:>14}\n", what, "bytes", "one-way ms", "Mbit/s");
  for (const Sample& x : samples) {
    fmt::print("{:>12} {:>12.4f} {:>14.1f}\n", x.bytes, 1e3 * x.one_way_seconds,
               8e-6 * static_cast<double>(x.bytes) / x.one_way_seconds);
  }
}

void run(const Settings& s) {
  comm::MpiCommunicator comm;
  if (comm.size() < 2) throw std::runtime_error("pingpong needs at least 2 ranks");
  std::vector<Sample> one_way, both_ways;
  for (std::size_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    comm.barrier();
    one_way.push_back({bytes, one_way_seconds(comm, bytes, s.round_trips)});
    comm.barrier();
    both_ways.push_back({bytes, exchange_seconds(comm, bytes, s.round_trips)});
  }
  comm.barrier();
  if (comm.rank() != 0) return;

  const auto [alpha, beta] = fit_alpha_beta(one_way);
  const auto [exchange_alpha, exchange_beta] = fit_alpha_beta(both_ways);
  const Sample& largest = one_way.back();
  const double largest_mbit = 8e-6 * static_cast<double>(largest.bytes) / largest.one_way_seconds;
  print_samples(fmt::format("rank 0 -> rank 1, network {}, median of {} round trips", s.network,
                            s.round_trips),
                one_way);
  print_samples("rank 0 <-> rank 1 at once (exchange), median", both_ways);
  fmt::print(
      "alpha_s={:.6g} beta_s_per_byte={:.6g} fit_mbit_per_s={:.2f} largest_mbit_per_s={:.2f}\n"
      "exchange_alpha_s={:.6g} exchange_beta_s_per_byte={:.6g} exchange_fit_mbit_per_s={:.2f}\n",
      alpha, beta, 8e-6 / beta, largest_mbit, exchange_alpha, exchange_beta, 8e-6 / exchange_beta);

  const nlohmann::json params = {{"network", s.network},
                                 {"min_bytes", s.min_bytes},
                                 {"max_bytes", s.max_bytes},
                                 {"round_trips", s.round_trips}};
  std::vector<record::BenchRow> rows = {
      bench_row("pingpong", "alpha", params, alpha, "s"),
      bench_row("pingpong", "beta", params, beta, "s/byte"),
      bench_row("pingpong", "exchange_alpha", params, exchange_alpha, "s"),
      bench_row("pingpong", "exchange_beta", params, exchange_beta, "s/byte"),
      bench_row("pingpong", "largest_message_bandwidth", params, largest_mbit, "Mbit/s")};
  // Each size's time too: the cost model prices a message within these sizes by them.
  for (const auto& [name, samples] :
       {std::pair{"one_way_seconds", &one_way}, std::pair{"exchange_seconds", &both_ways}}) {
    for (const Sample& x : *samples) {
      nlohmann::json sized = params;
      sized["bytes"] = x.bytes;
      rows.push_back(bench_row("pingpong", name, sized, x.one_way_seconds, "s"));
    }
  }
  record_bench(s.db, rows);
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
