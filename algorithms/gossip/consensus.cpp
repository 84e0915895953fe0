#include "algorithms/gossip/consensus.hpp"

#include <algorithm>

namespace commsgd::algorithms {

void ConsensusAverage::measure(Buffer<float> model, comm::Communicator& comm,
                               bool replace_by_average) {
  const float share = 1.0f / static_cast<float>(comm.size());
  const std::size_t room = std::min(slice_, model.size());
  own_.resize(room);
  average_.resize(room);
  double squared = 0;
  for_each_slice(model.size(), slice_, [&](std::size_t offset, std::size_t count) {
    const Buffer<float> mine = model.subspan(offset, count);
    const std::span<float> own(own_.data(), count), average(average_.data(), count);
    kernels::ops::copy_to_host(mine, own);
    std::copy(own.begin(), own.end(), average.begin());
    comm.allreduce(average, comm::ReduceOp::sum);
    kernels::ops::scale(Buffer<float>(average), share);
    squared += kernels::ops::squared_distance(Buffer<const float>(own), Buffer<const float>(average));
    if (replace_by_average) kernels::ops::copy_from_host(average, mine);
  });
  comm.allreduce(std::span(&squared, 1), comm::ReduceOp::sum);
  distance_ = squared / comm.size();
}

}  // namespace commsgd::algorithms
