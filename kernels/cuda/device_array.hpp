#pragma once

// Device memory for the CUDA kernels: stream-ordered allocation (cudaMallocAsync), so growing a
// scratch buffer between kernels never synchronizes the host with the device.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace commsgd::kernels::cuda {

// CUDA keeps the error of a failed call as the "last error" until cudaGetLastError reads it, and
// check_launch learns of a launch's failure only from there: so every failed call's error is read
// where it happens, by check or, where nothing can be reported (a destructor), by discard, and
// no earlier error is ever reported as a launch's.

// Throws std::runtime_error naming `what` and CUDA's description of the error (read).
void check(cudaError_t status, const char* what);

// For a call whose failure cannot be reported (in a destructor): reads its error.
void discard(cudaError_t status);

// The launch error of the kernel just enqueued (a bad configuration, no device), if any.
void check_launch(const char* what);

// Whether a query's answer (cudaStreamQuery, cudaEventQuery) is "not ready". That is an answer,
// not a failure, but CUDA keeps it as the thread's last error like one: it is read here (by
// `read_last_error`, cudaGetLastError), as PyTorch's stream and event queries do, or the next
// launch check would report "device not ready" as its own failure. Any other answer is left to
// the caller (check it, or discard it).
template <class ReadLastError>
bool not_ready(cudaError_t answer, ReadLastError&& read_last_error) {
  if (answer != cudaErrorNotReady) return false;
  (void)read_last_error();
  return true;
}
inline bool not_ready(cudaError_t answer) {
  return not_ready(answer, cudaGetLastError);
}

// Makes the current device's default memory pool, which cudaMallocAsync draws on, keep what is
// freed instead of handing it back to the driver at every synchronization (its release threshold
// is 0 by default): a scratch buffer allocated and freed in every step then costs no driver
// allocation after the first, as with LibTorch's caching allocator. Once per device; the rest
// of a process's calls cost a lookup.
void keep_freed_pool_memory();

// From now on, work enqueued on `later` runs after the work enqueued on `earlier` so far (an
// event; the host does not wait).
inline void order_streams(cudaStream_t later, cudaStream_t earlier) {
  cudaEvent_t done = nullptr;
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventRecord(done, earlier), "cudaEventRecord");
  check(cudaStreamWaitEvent(later, done), "cudaStreamWaitEvent");
  check(cudaEventDestroy(done), "cudaEventDestroy");  // released once it has fired
}

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(std::size_t size, cudaStream_t stream) { reserve(size, stream); }
  // Stream-ordered: work still queued on the stream finishes first. (A destructor cannot report
  // a failed free.)
  ~DeviceArray() {
    if (data_ != nullptr) discard(cudaFreeAsync(data_, stream_));
  }
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
  // The array follows the stream it is reserved on: work already queued on the previous one
  // finishes before `stream` goes on, and the memory is freed on the last one. Every kernel
  // wrapper reserves what it writes, so a selector may be called on a different stream each time;
  // a kernel that only reads an array on another stream (scatter_add of a set, a communicator
  // sending it) must be ordered before the array is written again or freed, as for any
  // stream-ordered memory. The last stream must outlive the array, which is freed there.
  void reserve(std::size_t size, cudaStream_t stream) {
    if (data_ != nullptr && stream != stream_) order_streams(stream, stream_);
    stream_ = stream;
    if (size > size_) resize(size);
  }

 private:
  void resize(std::size_t size) {
    if (data_ != nullptr)
      check(cudaFreeAsync(std::exchange(data_, nullptr), stream_), "cudaFreeAsync");
    size_ = 0;
    keep_freed_pool_memory();
    void* p = nullptr;
    check(cudaMallocAsync(&p, size * sizeof(T), stream_), "cudaMallocAsync");
    data_ = static_cast<T*>(p);
    size_ = size;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

// A sum the device makes (kernels adding to one double, atomically from several blocks) brought
// to the host: the double is zeroed, handed to `launch`, which enqueues those kernels on `stream`,
// and read back once the stream has caught up.
template <class Launch>
double device_sum(cudaStream_t stream, Launch&& launch) {
  DeviceArray<double> sum(1, stream);
  check(cudaMemsetAsync(sum.data(), 0, sizeof(double), stream), "cudaMemsetAsync");
  launch(sum.data());
  double result = 0;
  check(cudaMemcpyAsync(&result, sum.data(), sizeof result, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return result;
}

}  // namespace commsgd::kernels::cuda
