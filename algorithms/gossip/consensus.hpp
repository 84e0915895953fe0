#pragma once

#include <span>
#include <vector>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::algorithms {

// What a gossip run is evaluated on: the average of the ranks' models, and how far they are
// from it, (1/P)·Σ_r ‖x_r − x̄‖². A collective.
class ConsensusAverage {
 public:
  std::span<const float> compute(std::span<const float> model, comm::Communicator& comm);
  double distance() const { return distance_; }

 private:
  std::vector<float> average_;
  double distance_ = 0;
};

}  // namespace commsgd::algorithms
