// dense-overlap: per-iteration time of commsgd-train --algo dense with gradient buckets
// allreduced during backward against the same run with one allreduce after backward, over a link
// of known bandwidth, the two alternated in one job. Run under mpirun; by default every transfer
// is slowed to --link-mbps (as --emulate-link-mbps does), or with --link-mbps 0 across the
// emulated hosts of jobs/local/launch.sh. Target (issue 8): bucketed faster than unbucketed
// under 1 Gbit/s.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/comm/throttled_communicator.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "trainer/trainer.hpp"

namespace commsgd::bench {
namespace {

struct Settings {
  std::string model = "vgg16";
  std::vector<int> shape = {3, 32, 32};
  int batch_size = 16;
  int warmup = 2;
  int iterations = 5;
  int repeats = 3;
  double bucket_mb = 25;
  double link_mbps = 1000;
  std::string network = "emulated:1gbit";
  int threads = 1;
  std::string db = "results/bench.sqlite";
};

trainer::Options trainer_options(const Settings& s, int workers, const std::string& scratch) {
  trainer::Options o;
  o.algo = "dense";
  o.model = s.model;
  o.dataset = "synthetic";
  o.synthetic_shape = s.shape;
  o.synthetic_train = static_cast<long>(s.batch_size) * workers * (s.warmup + s.iterations);
  o.synthetic_val = s.batch_size;
  o.batch_size = s.batch_size;
  o.epochs = 1;
  o.max_steps = s.warmup + s.iterations;
  o.threads = s.threads;
  // Timed on the CPU, as the bench's rows always were: auto would take a GPU where there is one.
  o.device = "cpu";
  o.db_dir = scratch;
  o.quiet = true;
  return o;
}

// The slowest rank's time per timed iteration.
double seconds_per_iteration(const Settings& s, trainer::Options o, double bucket_mb,
                             comm::Communicator& comm, const comm::Placement& where) {
  o.bucket_mb = bucket_mb;
  const trainer::TrainingResult r = trainer::train(o, comm, where);
  double seconds =
      (r.training_end - r.iteration_starts.at(static_cast<std::size_t>(s.warmup))) / s.iterations;
  comm.allreduce(std::span(&seconds, 1), comm::ReduceOp::max);
  return seconds;
}

void run(const Settings& s) {
  comm::MpiCommunicator world;
  std::optional<comm::ThrottledCommunicator> throttled;
  comm::Communicator& comm = s.link_mbps > 0 ? throttled.emplace(world, s.link_mbps)
                                             : static_cast<comm::Communicator&>(world);
  const bool rank0 = world.rank() == 0;
  // Rank 0's scratch directory, on every rank: the ranks' options must agree (hosts may differ
  // in TMPDIR), and only rank 0 writes the runs' records there.
  std::string scratch =
      (std::filesystem::temp_directory_path() / fmt::format("commsgd_bench_overlap_{}", getpid()))
          .string();
  world.broadcast(scratch, 0);
  const trainer::Options o = trainer_options(s, world.size(), scratch);

  std::vector<double> bucketed, unbucketed;
  for (int r = 0; r < s.repeats; ++r) {
    bucketed.push_back(seconds_per_iteration(s, o, s.bucket_mb, comm, world.placement()));
    unbucketed.push_back(seconds_per_iteration(s, o, 0, comm, world.placement()));
    if (rank0) {
      fmt::print("repeat {}: buckets of {} MiB {:.1f} ms/iter, one allreduce {:.1f} ms/iter\n",
                 r + 1, s.bucket_mb, 1e3 * bucketed.back(), 1e3 * unbucketed.back());
    }
  }
  world.barrier();
  if (!rank0) return;
  std::filesystem::remove_all(scratch);
  const double ratio = median(unbucketed) / median(bucketed);
  fmt::print(
      "{} ranks, model {} batch {}, link {}: median bucketed {:.1f} ms, unbucketed {:.1f} ms, "
      "unbucketed/bucketed {:.3f} (target > 1)\n",
      world.size(), s.model, s.batch_size,
      s.link_mbps > 0 ? fmt::format("{} Mbit/s", s.link_mbps) : s.network, 1e3 * median(bucketed),
      1e3 * median(unbucketed), ratio);

  const nlohmann::json params = {
      {"model", s.model},        {"shape", s.shape},           {"batch_size", s.batch_size},
      {"workers", world.size()}, {"iterations", s.iterations}, {"warmup", s.warmup},
      {"repeats", s.repeats},    {"bucket_mb", s.bucket_mb},   {"link_mbps", s.link_mbps},
      {"network", s.network},    {"threads", s.threads}};
  const std::vector<record::BenchRow> rows = {
      bench_row("dense-overlap", "bucketed_iteration", params, median(bucketed), "s"),
      bench_row("dense-overlap", "unbucketed_iteration", params, median(unbucketed), "s"),
      bench_row("dense-overlap", "unbucketed_over_bucketed", params, ratio, "ratio")};
  record_bench(s.db, rows);
}

}  // namespace

void add_dense_overlap(CLI::App& app) {
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "dense-overlap",
      "Dense S-SGD per iteration: buckets allreduced during backward vs one allreduce after it "
      "(run under mpirun)");
  cmd->add_option("--model", settings->model, "Model")->capture_default_str();
  cmd->add_option("--shape", settings->shape, "C,H,W of the synthetic samples")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  cmd->add_option("--batch-size", settings->batch_size, "Batch size per rank")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", settings->warmup, "Untimed iterations first")->capture_default_str();
  cmd->add_option("--iterations", settings->iterations, "Timed iterations")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--repeats", settings->repeats, "Alternations of the two (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--bucket-mb", settings->bucket_mb, "Bucket size of the bucketed runs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--link-mbps", settings->link_mbps,
                  "Slow every transfer to this bandwidth (0: as is, e.g. across emulated hosts)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--network", settings->network, "Label of the network, stored with the rows")
      ->capture_default_str();
  cmd->add_option("--threads", settings->threads, "Intra-op threads per rank")
      ->capture_default_str();
  cmd->add_option("--db", settings->db, "SQLite file for the bench rows")->capture_default_str();
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
