#pragma once

#include <span>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/gossip/slices.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

using kernels::Buffer;

// What a gossip run is evaluated on: the average x̄ of the ranks' models, and how far they are
// from it, (1/P)·Σ_r ‖x_r − x̄‖². A collective, allreduced one slice at a time, through host
// memory wherever the model is: a communication thread (adpsgd's gossip) may have a device
// exchange in flight on a communicator of its own meanwhile, and NCCL does not promise progress
// to two communicators' operations in flight at once on one GPU. Once an epoch, the copies over
// the bus cost little.
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
  std::vector<float> own_, average_;  // one slice of this rank's model and of x̄, on the host
};

}  // namespace commsgd::algorithms
