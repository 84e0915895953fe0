#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"

namespace commsgd::kernels::cuda {

// kernels/sparse_ops.hpp on the device, enqueued on `stream`; dense buffers are device pointers.

// gTop-k's merge: the union of a and b by index (a.value + b.value on a shared index), then its
// first min(k, union size) entries in the selection order, sorted by index, in out (reserved to
// k). The inputs must be sorted by index (not checked: that would need the host), out must not
// alias them. Sort by index (CUB's stable radix sort), sum neighbours, radix select.
// A sum that is NaN is the GPU's one NaN (0x7fffffff) where the CPU keeps an operand's payload:
// its bits, and which of several NaN entries the merge keeps, may differ from the CPU's. Every
// other sum, infinities and signed zeros included, has the CPU's bits.
class SparseMerger {
 public:
  void merge_keep_k(const DeviceSparseSet& a, const DeviceSparseSet& b, std::size_t k,
                    DeviceSparseSet& out, cudaStream_t stream);

 private:
  DeviceArray<std::uint32_t> indices_, sorted_indices_;
  DeviceArray<float> values_, sorted_values_;
  DeviceArray<std::int32_t> keys_;
  DeviceArray<std::byte> sort_scratch_;
  SelectionScratch scratch_;
};

// dense[s.indices[i]] += s.values[i] for the set's entries.
void scatter_add(const DeviceSparseSet& s, float* dense, cudaStream_t stream);

// Error feedback: dense[s.indices[i]] = 0 for every entry i with applied[i] != 0.
void zero_applied(float* dense, const DeviceSparseSet& s, const std::uint8_t* applied,
                  cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
