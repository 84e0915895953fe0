#pragma once

#include <array>
#include <cstdint>

#include "algorithms/comm/communicator.hpp"
#include "analysis/record/run_database.hpp"

namespace commsgd::trainer {

// One iteration as this rank saw it.
struct IterationSample {
  double loss = 0;
  double data_s = 0, forward_backward_s = 0, select_s = 0, communicate_s = 0, wait_s = 0,
         update_s = 0, total_s = 0;
  double bytes_sent = 0, bytes_received = 0, density = 0;
};

// Averages iterations over a --log-every window on each rank, then over ranks (mean and max), into
// the `steps` row of that window. reduce() is a collective: every rank calls it at the same step.
class StepMetrics {
 public:
  void add(const IterationSample& sample);
  bool empty() const { return iterations_ == 0; }
  record::StepRow reduce(comm::Communicator& comm, std::int64_t step, int epoch);

 private:
  static constexpr std::size_t kFields = 11;
  static std::array<double, kFields> fields_of(const IterationSample& s);

  std::array<double, kFields> sum_{};
  int iterations_ = 0;
};

}  // namespace commsgd::trainer
