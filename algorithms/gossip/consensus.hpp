#pragma once

#include <span>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/gossip/slices.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

using kernels::Buffer;

// What a gossip run is evaluated on: the average x̄ of the ranks' models, and how far they are
// from it, (1/P)·Σ_r ‖x_r − x̄‖². A collective, allreduced one slice at a time.
class ConsensusAverage {
 public:
  explicit ConsensusAverage(std::size_t slice = kSliceFloats) : slice_(slice) {}

  // Measures the consensus distance of `model` (host or device memory); with
  // replace_by_average, `model` becomes x̄.
  void measure(Buffer<float> model, comm::Communicator& comm, bool replace_by_average);
  double distance() const { return distance_; }

 private:
  std::size_t slice_;
  double distance_ = 0;
  kernels::ops::Storage<float> average_;  // one slice of x̄
};

}  // namespace commsgd::algorithms
