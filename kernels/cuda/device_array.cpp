#include "kernels/cuda/device_array.hpp"

#include <atomic>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace commsgd::kernels::cuda {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

void discard(cudaError_t status) {
  if (status != cudaSuccess) (void)cudaGetLastError();
}

void keep_freed_pool_memory() {
  // A bit per device once its pool is set: every allocation asks, so the answer takes no lock.
  // Two threads may both set a pool the first time, and a device past the 64th is set every
  // time: setting it is idempotent.
  static std::atomic<std::uint64_t> kept{0};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const std::uint64_t bit = device < 64 ? std::uint64_t{1} << device : 0;
  if ((kept.load(std::memory_order_relaxed) & bit) != 0) return;
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
        "cudaMemPoolSetAttribute");
  kept.fetch_or(bit, std::memory_order_relaxed);
}

void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace commsgd::kernels::cuda
