#include "kernels/cuda/sparse_set.hpp"

#include <algorithm>
#include <stdexcept>

namespace commsgd::kernels::cuda {

void DeviceSparseSet::reserve(std::size_t capacity, cudaStream_t stream) {
  values.reserve(capacity, stream);
  indices.reserve(capacity, stream);
  count.reserve(1, stream);
}

void upload(const SparseSet& host, DeviceSparseSet& device, cudaStream_t stream) {
  if (host.values.size() != host.indices.size()) {
    throw std::invalid_argument("upload: values and indices differ in length");
  }
  device.reserve(std::max<std::size_t>(host.size(), 1), stream);
  const auto count = static_cast<std::uint32_t>(host.size());
  // Pageable host memory: each copy is staged before it returns, so the sources may go away.
  check(cudaMemcpyAsync(device.values.data(), host.values.data(), host.size() * sizeof(float),
                        cudaMemcpyHostToDevice, stream),
        "upload values");
  check(cudaMemcpyAsync(device.indices.data(), host.indices.data(),
                        host.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream),
        "upload indices");
  check(cudaMemcpyAsync(device.count.data(), &count, sizeof count, cudaMemcpyHostToDevice, stream),
        "upload count");
}

std::uint32_t download_count(const DeviceSparseSet& device, cudaStream_t stream) {
  std::uint32_t count = 0;
  check(cudaMemcpyAsync(&count, device.count.data(), sizeof count, cudaMemcpyDeviceToHost, stream),
        "download count");
  check(cudaStreamSynchronize(stream), "download count");
  return count;
}

SparseSet download(const DeviceSparseSet& device, cudaStream_t stream) {
  const std::size_t size = std::min<std::size_t>(download_count(device, stream), device.capacity());
  SparseSet host;
  host.values.resize(size);
  host.indices.resize(size);
  check(cudaMemcpyAsync(host.values.data(), device.values.data(), size * sizeof(float),
                        cudaMemcpyDeviceToHost, stream),
        "download values");
  check(cudaMemcpyAsync(host.indices.data(), device.indices.data(), size * sizeof(std::uint32_t),
                        cudaMemcpyDeviceToHost, stream),
        "download indices");
  check(cudaStreamSynchronize(stream), "download");
  return host;
}

}  // namespace commsgd::kernels::cuda
