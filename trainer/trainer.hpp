#pragma once

#include <filesystem>
#include <stdexcept>
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
  // Batches and updates left out by --on-nonfinite skip-step, summed over ranks.
  long skipped = 0;
  // Non-zero: the signal that stopped the run at a checkpoint (its row says `preempted`).
  int stopped_by_signal = 0;
  // Start time of every iteration and the end of the last one, in seconds since training
  // began: what a throughput benchmark needs to exclude warm-up iterations.
  std::vector<double> iteration_starts;
  double training_end = 0;
};

// Training failed on this rank after it started; the error was already printed and recorded.
class TrainingFailed : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Trains on every rank of `comm` (a collective from start to end). Setup problems (bad options,
// data, database path) surface as SetupFailed on every rank before any training; a failure during
// training is printed, marks the run `failed`, and comes out as TrainingFailed. --device auto is
// resolved first, alike on every rank (with_device_resolved, setup.hpp).
TrainingResult train(const Options& options, comm::Communicator& comm,
                     const comm::Placement& where);

}  // namespace commsgd::trainer
