#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "analysis/record/run_database.hpp"

namespace commsgd::trainer {

// One iteration as this rank saw it.
struct IterationSample {
  double loss = 0;
  double data_s = 0, forward_backward_s = 0, select_s = 0, communicate_s = 0, wait_s = 0,
         update_s = 0, total_s = 0;
  double overlapped_communicate_s = 0;  // another thread's communication, beside the phases above
  double bytes_sent = 0, bytes_received = 0, density = 0;
};

// Averages iterations over a --log-every window on each rank, then window by window over ranks
// (mean and max) into `steps` rows. In lockstep, every rank closes the same windows and reduces
// after each; ranks that run different numbers of iterations (adpsgd) reduce all of an epoch's
// windows at its end, each row over the ranks that reached that window. Non-finite losses (batches
// that --on-nonfinite skip-step left out) are left out of the loss.
class StepMetrics {
 public:
  void add(const IterationSample& sample);
  // Ends the current window at this rank's iteration `step`; nothing if it is empty.
  void close_window(std::int64_t step);
  // Collective: the closed windows of every rank, combined; clears them.
  std::vector<record::StepRow> reduce(comm::Communicator& comm, int epoch);

 private:
  static constexpr std::size_t kFields = 12;
  static std::array<double, kFields> fields_of(const IterationSample& s);

  struct Window {
    std::array<double, kFields> mean;
    std::int64_t step;
    bool has_loss;  // some iteration of the window had a finite loss
  };
  std::array<double, kFields> sum_{};
  int iterations_ = 0, loss_iterations_ = 0;
  std::vector<Window> windows_;
  std::int64_t last_step_ = -1;
};

}  // namespace commsgd::trainer
