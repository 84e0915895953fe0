#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {

struct TrainingResult {
  std::string run_id;
  std::filesystem::path database;
  double val_loss = 0, val_top1 = 0;
  long iterations = 0;
  // Start time of every iteration and the end of the last one, in seconds since training
  // began: what a throughput benchmark needs to exclude warm-up iterations.
  std::vector<double> iteration_starts;
  double training_end = 0;
};

// Trains on every rank of `comm` (a collective from start to end). Setup problems (bad options,
// data, database path) surface as SetupFailed on every rank before any training; a failure during
// training marks the run `failed` and rethrows.
TrainingResult train(const Options& options, comm::Communicator& comm,
                     const comm::Placement& where);

}  // namespace commsgd::trainer
