// pingpong: point-to-point time of a message between ranks 0 and 1 over a range of sizes, one way
// and exchanged both ways at once, back to back and after computation, and the α-β model
// t(n) = α + β·n fitted to each. α and β per network are what the cost model needs (1/β is the
// link's bandwidth), the exchange's time at each size, by which it prices messages within the
// measured sizes, and a shaped link's token-bucket burst. Run under mpirun with the two ranks on
// the two hosts to measure. Other ranks wait, polling: where ranks outnumber cores they take
// cores from the two that measure.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
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
  double idle_ms = 10;
  int idle_repeats = 21;
  std::vector<double> latency_idle_ms = {0.25, 0.5, 1, 2, 4, 8, 16, 32};
  int compute_hidden = kComputeHidden;
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
  return median(times);
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

// Two exchanges of `bytes` one after the other as an Open MPI collective makes its steps: the
// receive posted first, then the send (its coll/base send-receive; commsgd's own exchanges above
// send first). Over TCP a message beyond the transport's eager limit (64 kB) goes by rendezvous,
// and in the second step the two directions now and then go one after the other (results/
// README.md, "Why dense's allreduce costs more than two exchanges"). Which step does is random,
// so the price of a step is the mean over the repeats, not the median. Each pair starts behind a
// barrier, as a training step's collective does: back to back, the ranks start a pair as far
// apart as the last one left them, and then its first step serialized too (two steps took four
// times one: results/costmodel/README.md).
double collective_steps_seconds(comm::Communicator& comm, std::size_t bytes, int repeats) {
  std::vector<std::byte> message(bytes), received(bytes);
  const int peer = 1 - comm.rank();
  const comm::Outgoing send{message.data(), bytes, peer};
  const comm::Incoming receive{received.data(), bytes, peer};
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    comm.barrier();
    const algorithms::Stopwatch watch;
    if (comm.rank() < 2) {
      for (int step = 0; step < 2; ++step) comm.send_receive({&send, 1}, {&receive, 1});
    }
    if (i > 0) times.push_back(watch.seconds());
  }
  return std::accumulate(times.begin(), times.end(), 0.0) / repeats;
}

// The same exchange as a training step of two ranks makes it: ranks 0 and 1 compute for `idle`
// seconds, meet at a barrier (as --barrier-before-communicate) and exchange; only the exchange is
// timed. The link has idled meanwhile, so a shaped link's token bucket has refilled, up to its
// burst, where back to back the exchanges above find it empty beyond their first few. The
// computation is a training step's (compute_for), so that the exchange starts with the caches a
// training step leaves: a small exchange takes longer after a memory sweep than after a spin,
// and longer still after LibTorch's forward and backward. The result is the mean over the
// repeats and over both ranks, as a training run records the mean over its steps and its ranks:
// these exchanges spread widely, over a factor of five, and a median of a few moves from run to
// run (results/costmodel/README.md). Other ranks only meet at the
// barriers, and return 0.
double after_idle_exchange_seconds(comm::Communicator& comm, std::size_t bytes, int repeats,
                                   double idle, int hidden) {
  const bool measures = comm.rank() < 2;
  const int peer = 1 - comm.rank();
  std::vector<std::byte> message(bytes), received;
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    if (measures) message[0] = static_cast<std::byte>(compute_for(idle, hidden) > 1.5f);  // used
    comm.barrier();
    if (!measures) continue;
    const algorithms::Stopwatch watch;
    comm.exchange(message.data(), bytes, peer, received);
    if (i > 0) times.push_back(watch.seconds());
  }
  if (!measures) return 0;
  const double mine = std::accumulate(times.begin(), times.end(), 0.0) / repeats;
  std::vector<std::byte> theirs;
  comm.exchange(&mine, sizeof mine, peer, theirs);
  double their_mean = 0;
  std::memcpy(&their_mean, theirs.data(), sizeof their_mean);
  return (mine + their_mean) / 2;
}

// The least-squares line t = α + β·n through the samples: {α, β}.
std::pair<double, double> least_squares(std::span<const Sample> samples) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Sample& s : samples) {
    const double x = static_cast<double>(s.bytes);
    sx += x;
    sy += s.one_way_seconds;
    sxx += x * x;
    sxy += x * s.one_way_seconds;
  }
  const double n = static_cast<double>(samples.size());
  if (samples.size() < 2) return {sy / n, 0.0};
  const double beta = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - beta * sx) / n, beta};
}

// {α, β} of t(n) = α + β·n. One least-squares line through all sizes fits neither end: a
// shaped link lets messages up to its token-bucket burst pass at full speed, and the large
// messages' scatter then decides α (it can come out negative). So α is the time of the smallest
// messages, where latency is all there is: the median of the three smallest sizes' times, as
// one size's can be off by nearly a factor of two. β is the
// least-squares slope over the larger half of the sizes, where bandwidth is.
std::pair<double, double> fit_alpha_beta(const std::vector<Sample>& samples) {
  const std::span<const Sample> large = std::span(samples).subspan(samples.size() / 2);
  const double beta = large.size() > 1
                          ? least_squares(large).second
                          : large[0].one_way_seconds / static_cast<double>(large[0].bytes);
  std::vector<double> smallest;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, samples.size()); ++i) {
    smallest.push_back(samples[i].one_way_seconds);
  }
  return {median(smallest), beta};
}

// {α, β} of the exchanges after computation within half the burst, where a full bucket passes
// every byte at the hosts' speed: a least-squares line, whose α averages the noise of single
// medians over the sizes (a 1 kB median came out at twice its neighbours').
std::pair<double, double> fit_after_idle(const std::vector<Sample>& after_idle, double burst) {
  std::size_t below = 1;
  while (below < after_idle.size() && static_cast<double>(after_idle[below].bytes) <= burst / 2) {
    ++below;
  }
  const auto [alpha, beta] = least_squares(std::span(after_idle).first(below));
  return {alpha, std::max(0.0, beta)};
}

// A shaped link's token-bucket burst: the bytes that pass at the hosts' speed after idle. Where
// the transfer dominates the back-to-back exchange (10 times its smallest time and more), every
// byte of it goes at the link's rate, and after idle all but the burst do: the burst is the
// share of the bytes the exchange after idle saved, n·(1 − after idle/back to back). The median
// over those sizes; 0 on a link without a bucket.
double burst_bytes(const std::vector<Sample>& back_to_back, const std::vector<Sample>& after_idle) {
  std::vector<double> bursts;
  for (std::size_t i = 0; i < back_to_back.size(); ++i) {
    const double time = back_to_back[i].one_way_seconds;
    if (time < 10 * back_to_back.front().one_way_seconds) continue;
    const double saved = std::max(0.0, 1 - after_idle[i].one_way_seconds / time);
    bursts.push_back(static_cast<double>(back_to_back[i].bytes) * saved);
  }
  return bursts.empty() ? 0 : median(bursts);
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
  std::vector<Sample> one_way, both_ways, collective_steps, after_idle;
  for (std::size_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    comm.barrier();
    one_way.push_back({bytes, one_way_seconds(comm, bytes, s.round_trips)});
    comm.barrier();
    both_ways.push_back({bytes, exchange_seconds(comm, bytes, s.round_trips)});
    collective_steps.push_back({bytes, collective_steps_seconds(comm, bytes, s.round_trips)});
    after_idle.push_back({bytes, after_idle_exchange_seconds(comm, bytes, s.idle_repeats,
                                                             s.idle_ms / 1e3, s.compute_hidden)});
  }
  // The smallest message after each computation of --latency-idle-ms: (ms computed, seconds).
  std::vector<std::pair<double, double>> latency;
  for (const double ms : s.latency_idle_ms) {
    latency.emplace_back(ms, after_idle_exchange_seconds(comm, s.min_bytes, s.idle_repeats,
                                                         ms / 1e3, s.compute_hidden));
  }
  comm.barrier();
  if (comm.rank() != 0) return;

  const auto [alpha, beta] = fit_alpha_beta(one_way);
  const auto [exchange_alpha, exchange_beta] = fit_alpha_beta(both_ways);
  const double burst = burst_bytes(both_ways, after_idle);
  const auto [idle_alpha, idle_beta] = fit_after_idle(after_idle, burst);
  const Sample& largest = one_way.back();
  const double largest_mbit = 8e-6 * static_cast<double>(largest.bytes) / largest.one_way_seconds;
  print_samples(fmt::format("rank 0 -> rank 1, network {}, median of {} round trips", s.network,
                            s.round_trips),
                one_way);
  print_samples("rank 0 <-> rank 1 at once (exchange), median", both_ways);
  print_samples("two exchanges as a collective's steps (receive first, after a barrier), mean",
                collective_steps);
  print_samples(fmt::format("exchange after {} ms of computation (MLP 64-{}-10), mean of {}",
                            s.idle_ms, s.compute_hidden, s.idle_repeats),
                after_idle);
  fmt::print("exchange of {} bytes after computation, mean of {}\n{:>12} {:>12}\n", s.min_bytes,
             s.idle_repeats, "computed ms", "ms");
  for (const auto& [ms, seconds] : latency) fmt::print("{:>12} {:>12.4f}\n", ms, 1e3 * seconds);
  fmt::print(
      "alpha_s={:.6g} beta_s_per_byte={:.6g} fit_mbit_per_s={:.2f} largest_mbit_per_s={:.2f}\n"
      "exchange_alpha_s={:.6g} exchange_beta_s_per_byte={:.6g} exchange_fit_mbit_per_s={:.2f}\n"
      "burst_bytes={:.0f} after_idle_alpha_s={:.6g} after_idle_beta_s_per_byte={:.6g}\n",
      alpha, beta, 8e-6 / beta, largest_mbit, exchange_alpha, exchange_beta, 8e-6 / exchange_beta,
      burst, idle_alpha, idle_beta);

  const nlohmann::json params = {{"network", s.network},
                                 {"min_bytes", s.min_bytes},
                                 {"max_bytes", s.max_bytes},
                                 {"round_trips", s.round_trips},
                                 {"idle_ms", s.idle_ms},
                                 {"idle_repeats", s.idle_repeats},
                                 {"compute_hidden", s.compute_hidden}};
  std::vector<record::BenchRow> rows = {
      bench_row("pingpong", "alpha", params, alpha, "s"),
      bench_row("pingpong", "beta", params, beta, "s/byte"),
      bench_row("pingpong", "exchange_alpha", params, exchange_alpha, "s"),
      bench_row("pingpong", "exchange_beta", params, exchange_beta, "s/byte"),
      bench_row("pingpong", "largest_message_bandwidth", params, largest_mbit, "Mbit/s"),
      bench_row("pingpong", "burst_bytes", params, burst, "bytes"),
      bench_row("pingpong", "after_idle_alpha", params, idle_alpha, "s"),
      bench_row("pingpong", "after_idle_beta", params, idle_beta, "s/byte")};
  // Each size's time too: the cost model prices a message within these sizes by them.
  for (const auto& [name, samples] :
       {std::pair{"one_way_seconds", &one_way}, std::pair{"exchange_seconds", &both_ways},
        std::pair{"collective_steps_seconds", &collective_steps},
        std::pair{"after_idle_exchange_seconds", &after_idle}}) {
    for (const Sample& x : *samples) {
      nlohmann::json sized = params;
      sized["bytes"] = x.bytes;
      rows.push_back(bench_row("pingpong", name, sized, x.one_way_seconds, "s"));
    }
  }
  for (const auto& [ms, seconds] : latency) {
    nlohmann::json computed = params;
    computed["computed_s"] = ms / 1e3;
    rows.push_back(bench_row("pingpong", "after_idle_latency_seconds", computed, seconds, "s"));
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
  cmd->add_option("--idle-ms", settings->idle_ms,
                  "Computation before each exchange of the after-idle sweep; long enough for a "
                  "shaped link's token bucket to refill (its burst at the link's rate)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--latency-idle-ms", settings->latency_idle_ms,
                  "Computations before the smallest message, one by one: its latency by how long "
                  "the ranks computed before it (a training step's first message)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--idle-repeats", settings->idle_repeats,
                  "Exchanges per size and per computation after idle (mean, as a training run "
                  "records)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_compute_hidden_option(*cmd, settings->compute_hidden);
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
