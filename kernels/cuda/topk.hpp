#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"

namespace commsgd::kernels::cuda {

// kernels/topk.hpp on the device: the exact top-k of |x| (ties: smaller index), sorted by index,
// out.count = k. Radix select on the order keys (three passes over x), then one counting pass
// and a write pass that touches only the tiles holding a selected entry. Enqueued on `stream`;
// the host does not wait. x is a device pointer; 1 <= k <= n < 2^32, else
// std::invalid_argument. Scratch is kept: steady-state calls do not allocate.
class TopkSelector {
 public:
  void select(const float* x, std::size_t n, std::size_t k, DeviceSparseSet& out,
              cudaStream_t stream);

 private:
  SelectionScratch scratch_;
};

}  // namespace commsgd::kernels::cuda
