#include "tests/bench/trainer_timing.hpp"

#include "algorithms/comm/mpi_communicator.hpp"
#include "trainer/trainer.hpp"

namespace commsgd::bench {

trainer::Options synthetic_training(const std::string& model, const std::vector<int>& shape,
                                    int batch_size, int iterations, int threads,
                                    const std::filesystem::path& scratch) {
  trainer::Options o;
  o.model = model;
  o.dataset = "synthetic";
  o.synthetic_shape = shape;
  o.synthetic_train = static_cast<long>(batch_size) * iterations;
  o.synthetic_val = batch_size;
  o.batch_size = batch_size;
  o.epochs = 1;
  o.max_steps = iterations;
  o.threads = threads;
  o.db_dir = scratch.string();
  o.quiet = true;
  return o;
}

double seconds_per_iteration(const trainer::Options& o, int warmup) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const trainer::TrainingResult r = trainer::train(o, self, self.placement());
  const auto timed = static_cast<double>(o.max_steps - warmup);
  return (r.training_end - r.iteration_starts.at(static_cast<std::size_t>(warmup))) / timed;
}

}  // namespace commsgd::bench
