#include "tests/bench/trainer_timing.hpp"

#include <CLI/CLI.hpp>

#include "algorithms/comm/mpi_communicator.hpp"
#include "trainer/trainer.hpp"

namespace commsgd::bench {

void add_timed_training_options(CLI::App& cmd, TimedTraining& s) {
  cmd.add_option("--model", s.model, "Model")->capture_default_str();
  cmd.add_option("--shape", s.shape, "C,H,W of the synthetic samples")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  cmd.add_option("--batch-size", s.batch_size, "Batch size")->capture_default_str();
  cmd.add_option("--warmup", s.warmup, "Untimed iterations first")->capture_default_str();
  cmd.add_option("--iterations", s.iterations, "Timed iterations")->capture_default_str();
  cmd.add_option("--repeats", s.repeats, "Alternations of the two (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--threads", s.threads, "Intra-op threads for both")->capture_default_str();
  cmd.add_option("--db", s.db, "SQLite file for the bench rows")->capture_default_str();
}

nlohmann::json params_of(const TimedTraining& s) {
  return {{"model", s.model},           {"shape", s.shape},   {"batch_size", s.batch_size},
          {"iterations", s.iterations}, {"warmup", s.warmup}, {"repeats", s.repeats},
          {"threads", s.threads}};
}

trainer::Options synthetic_training(const TimedTraining& s, const std::filesystem::path& scratch) {
  trainer::Options o;
  o.model = s.model;
  o.dataset = "synthetic";
  o.synthetic_shape = s.shape;
  o.synthetic_train = static_cast<long>(s.batch_size) * (s.warmup + s.iterations);
  o.synthetic_val = s.batch_size;
  o.batch_size = s.batch_size;
  o.epochs = 1;
  o.max_steps = s.warmup + s.iterations;
  o.threads = s.threads;
  // Timed on the CPU, as the bench's rows always were: auto would take a GPU where there is one.
  o.device = "cpu";
  o.db_dir = scratch.string();
  o.quiet = true;
  return o;
}

std::size_t parameter_count(const trainer::ModelSpec& spec) {
  std::size_t n = 0;
  for (const torch::Tensor& p : trainer::make_model(spec)->parameters()) {
    n += static_cast<std::size_t>(p.numel());
  }
  return n;
}

double seconds_per_iteration(const trainer::Options& o, int warmup) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const trainer::TrainingResult r = trainer::train(o, self, self.placement());
  const auto timed = static_cast<double>(o.max_steps - warmup);
  return (r.training_end - r.iteration_starts.at(static_cast<std::size_t>(warmup))) / timed;
}

}  // namespace commsgd::bench
