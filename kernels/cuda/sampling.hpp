#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"

namespace commsgd::kernels::cuda {

// What the DGC kernels keep on the device between their passes.
struct DgcState {
  SelectionBound bound;        // what is written: key >= the sample's threshold, or x's top k
  SelectionBound exact_bound;  // x's top k, looked for only when too many pass the threshold
  std::uint32_t count = 0;     // entries at or above the sample's threshold
  std::uint32_t too_many = 0;  // nonzero: count > 4k/3, and x's top k is selected instead
};

// kernels/sampling.hpp's DgcSelector on the device, selecting the same entries: the same strided
// sample (kernels::dgc_sample), its radix select, a counting pass over x and the write pass, all
// enqueued on `stream` with no host wait. When more than 4k/3 pass, which the host never learns,
// three radix passes and a recount over x find x's top k; otherwise those kernels return at once.
// x is a device pointer; out is reserved to ⌊4k/3⌋ entries, which the count never exceeds.
// 1 <= k <= n < 2^32, else std::invalid_argument.
class DgcSelector {
 public:
  void select(const float* x, std::size_t n, std::size_t k, DeviceSparseSet& out,
              cudaStream_t stream);

 private:
  DeviceArray<float> sample_;
  DeviceArray<DgcState> state_;
  SelectionScratch scratch_;
};

}  // namespace commsgd::kernels::cuda
