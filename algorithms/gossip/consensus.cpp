#include "algorithms/gossip/consensus.hpp"

#include <algorithm>

#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

std::span<const float> ConsensusAverage::compute(std::span<const float> model,
                                                 comm::Communicator& comm) {
  average_.assign(model.begin(), model.end());
  comm.allreduce(std::span(average_), comm::ReduceOp::sum);
  kernels::scale(average_, 1.0f / static_cast<float>(comm.size()));
  double squared = 0;
  for (std::size_t i = 0; i < model.size(); ++i) {
    const double diff = static_cast<double>(model[i]) - average_[i];
    squared += diff * diff;
  }
  comm.allreduce(std::span(&squared, 1), comm::ReduceOp::sum);
  distance_ = squared / comm.size();
  return average_;
}

}  // namespace commsgd::algorithms
