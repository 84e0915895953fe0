#include "algorithms/gossip/consensus.hpp"

#include <algorithm>
#include <vector>

#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

void ConsensusAverage::measure(std::span<float> model, comm::Communicator& comm,
                               bool replace_by_average) {
  const float share = 1.0f / static_cast<float>(comm.size());
  std::vector<float> average(std::min(slice_, model.size()));  // one slice of x̄
  double squared = 0;
  for_each_slice(model.size(), slice_, [&](std::size_t offset, std::size_t count) {
    const std::span<float> mine = model.subspan(offset, count);
    const std::span<float> slice = std::span(average).first(count);
    std::copy(mine.begin(), mine.end(), slice.begin());
    comm.allreduce(slice, comm::ReduceOp::sum);
    kernels::scale(slice, share);
    for (std::size_t i = 0; i < count; ++i) {
      const double diff = static_cast<double>(mine[i]) - slice[i];
      squared += diff * diff;
    }
    if (replace_by_average) std::copy(slice.begin(), slice.end(), mine.begin());
  });
  comm.allreduce(std::span(&squared, 1), comm::ReduceOp::sum);
  distance_ = squared / comm.size();
}

}  // namespace commsgd::algorithms
