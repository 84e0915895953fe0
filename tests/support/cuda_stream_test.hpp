#pragma once

// What the CUDA kernel tests share: a fixture with a stream of its own, skipped (saying so)
// where there is no device, and host vectors copied to the device and back.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/cuda/device_array.hpp"

namespace commsgd::testing {

class CudaStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "no CUDA device (" << cudaGetErrorString(status)
                   << "): kernels/cuda is compiled here, not run";
    }
    kernels::cuda::check(cudaStreamCreate(&stream_), "cudaStreamCreate");
  }
  // A fixture's buffers are freed on stream_ (stream-ordered), so a derived TearDown frees them
  // first; then every error the test's work left on the stream shows here, not in the next test.
  void TearDown() override {
    if (stream_ == nullptr) return;
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "an error no call of the test read";
  }

  cudaStream_t stream_ = nullptr;
};

// A copy of host values on the device.
template <class T>
class DeviceCopy {
 public:
  DeviceCopy(const std::vector<T>& host, cudaStream_t stream) : data_(host.size(), stream) {
    kernels::cuda::check(cudaMemcpyAsync(data_.data(), host.data(), host.size() * sizeof(T),
                                         cudaMemcpyHostToDevice, stream),
                         "upload");
  }
  T* data() { return data_.data(); }
  std::vector<T> download(cudaStream_t stream) const {
    std::vector<T> host(data_.size());
    kernels::cuda::check(cudaMemcpyAsync(host.data(), data_.data(), host.size() * sizeof(T),
                                         cudaMemcpyDeviceToHost, stream),
                         "download");
    kernels::cuda::check(cudaStreamSynchronize(stream), "download");
    return host;
  }

 private:
  kernels::cuda::DeviceArray<T> data_;
};

}  // namespace commsgd::testing
