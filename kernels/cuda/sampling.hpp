#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"
#include "kernels/sampling.hpp"

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

// kernels/sampling.hpp's RandomSelector on the device: the same k indices for the same (seed, n,
// k), sorted, values gathered from x, out.count = k. The indices depend on no entry of x and
// Floyd's algorithm is sequential, so the host picks them (the CPU selector's own code) into
// pinned memory, from which they are copied and gathered on `stream`. The host waits only when
// the previous call's copy out of that memory has not finished (before it writes there again),
// and when k grows past what it has held (freeing and pinning memory synchronize the device).
// 1 <= k <= n < 2^32, else std::invalid_argument.
class RandomSelector {
 public:
  RandomSelector() = default;
  ~RandomSelector();
  RandomSelector(const RandomSelector&) = delete;
  RandomSelector& operator=(const RandomSelector&) = delete;

  void select(const float* x, std::size_t n, std::size_t k, std::uint64_t seed,
              DeviceSparseSet& out, cudaStream_t stream);

 private:
  kernels::RandomSelector host_;
  std::uint32_t* picked_ = nullptr;  // pinned host memory for capacity_ indices
  std::size_t capacity_ = 0;
  cudaEvent_t copied_ = nullptr;  // recorded after the last copy out of picked_
};

}  // namespace commsgd::kernels::cuda
