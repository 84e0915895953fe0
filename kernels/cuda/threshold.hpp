#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"
#include "kernels/threshold.hpp"

namespace commsgd::kernels::cuda {

// kernels/threshold.hpp on the device: "|x| > threshold", NaN entries passing; x is a device
// pointer, every call is enqueued on `stream` and the host does not wait.

// *count (device memory) = how many entries pass.
void count_abs_greater(const float* x, std::size_t n, float threshold, std::uint32_t* count,
                       cudaStream_t stream);

// out = the entries that pass, sorted by index; out.count = how many passed. Only the first
// out.capacity() of them are written: a caller that cannot bound the count reserves n.
class ThresholdSelector {
 public:
  void select(const float* x, std::size_t n, float threshold, DeviceSparseSet& out,
              cudaStream_t stream);

 private:
  SelectionScratch scratch_;
};

// What the Gaussian-k kernels keep on the device between their passes.
struct GaussianState {
  SelectionBound bound;  // the key of `threshold`
  float threshold = 0;
  std::int32_t refinements = 0;
  std::uint32_t count = 0;  // entries above `threshold`
  std::uint32_t stale = 0;  // nonzero: `threshold` changed since `count` was taken
};

// kernels/threshold.hpp's GaussianSelector, with its arithmetic (μ and σ in double, thresholds
// in float, the same three refinements), all on the device, and deterministic (the same bits on
// the same device and data, run after run): one moments pass, then a counting
// pass per threshold tried (a pass that finds its threshold unchanged returns at once), then the
// write pass. μ and σ are summed in another order than on the CPU, so the threshold may differ
// in its last bits. Capacity as for ThresholdSelector.
class GaussianSelector {
 public:
  void select(const float* x, std::size_t n, std::size_t k, double density, DeviceSparseSet& out,
              cudaStream_t stream);
  // The last selection's threshold and refinements (synchronizes the stream).
  GaussianSelection last_selection(cudaStream_t stream) const;

 private:
  DeviceArray<GaussianState> state_;
  DeviceArray<double2> block_sums_;  // each block's Σ (x − shift), Σ (x − shift)²
  CompactionScratch tiles_;
};

}  // namespace commsgd::kernels::cuda
