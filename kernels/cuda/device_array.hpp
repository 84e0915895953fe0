#pragma once

// Device memory for the CUDA kernels: stream-ordered allocation (cudaMallocAsync), so growing a
// scratch buffer between kernels never synchronizes the host with the device.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace commsgd::kernels::cuda {

// Throws std::runtime_error naming `what` and CUDA's description of the error.
void check(cudaError_t status, const char* what);

// The first launch error of the kernels just enqueued (a bad configuration, no device), if any.
void check_launch(const char* what);

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(std::size_t size, cudaStream_t stream) { resize(size, stream); }
  ~DeviceArray() { release(); }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        stream_(other.stream_) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(stream_, other.stream_);
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Room for at least `size` elements; the contents are not kept (these are scratch buffers).
  void reserve(std::size_t size, cudaStream_t stream) {
    if (size <= size_) return;
    resize(size, stream);
  }

 private:
  void resize(std::size_t size, cudaStream_t stream) {
    release();
    void* p = nullptr;
    check(cudaMallocAsync(&p, size * sizeof(T), stream), "cudaMallocAsync");
    data_ = static_cast<T*>(p);
    size_ = size;
    stream_ = stream;
  }
  // Freed on the stream it was allocated on: work still queued there that uses it finishes first.
  void release() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace commsgd::kernels::cuda
