#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/device_array.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::kernels::cuda {

// kernels/sparse_set.hpp in device memory: the first *count slots hold entries sorted by index.
// The count stays on the device, where the kernel that produced the set wrote it, so a chain of
// kernels (select, exchange, merge, apply) never waits for the host to learn it.
struct DeviceSparseSet {
  DeviceArray<float> values;
  DeviceArray<std::uint32_t> indices;
  DeviceArray<std::uint32_t> count;

  std::size_t capacity() const { return indices.size(); }
  // Room for `capacity` entries (contents not kept).
  void reserve(std::size_t capacity, cudaStream_t stream);
};

// Copies to the device (stream-ordered; the host set may be reused on return).
void upload(const SparseSet& host, DeviceSparseSet& device, cudaStream_t stream);
// Synchronizes the stream, then returns the set's first min(count, capacity) entries: for tests
// and for host code that has to look at a selection.
SparseSet download(const DeviceSparseSet& device, cudaStream_t stream);
// The count alone, for a set whose selector may have found more than fits (synchronizes).
std::uint32_t download_count(const DeviceSparseSet& device, cudaStream_t stream);

}  // namespace commsgd::kernels::cuda
