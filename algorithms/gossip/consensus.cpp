#include "algorithms/gossip/consensus.hpp"

#include <algorithm>

namespace commsgd::algorithms {

void ConsensusAverage::measure(Buffer<float> model, comm::Communicator& comm,
                               bool replace_by_average) {
  const float share = 1.0f / static_cast<float>(comm.size());
  average_.resize(std::min(slice_, model.size()), model.place());
  double squared = 0;
  for_each_slice(model.size(), slice_, [&](std::size_t offset, std::size_t count) {
    const Buffer<float> mine = model.subspan(offset, count);
    const Buffer<float> slice = average_.buffer().subspan(0, count);
    kernels::ops::copy(mine, slice);
    comm.allreduce(slice, comm::ReduceOp::sum);
    kernels::ops::scale(slice, share);
    squared += kernels::ops::squared_distance(mine, slice);
    if (replace_by_average) kernels::ops::copy(slice, mine);
  });
  comm.allreduce(std::span(&squared, 1), comm::ReduceOp::sum);
  distance_ = squared / comm.size();
}

}  // namespace commsgd::algorithms
