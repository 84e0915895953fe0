#include "kernels/cuda/device_array.hpp"

#include <cstdint>
#include <limits>
#include <mutex>
#include <set>
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
  static std::mutex mutex;
  static std::set<int> done;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const std::lock_guard lock(mutex);
  if (done.contains(device)) return;
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
        "cudaMemPoolSetAttribute");
  done.insert(device);
}

void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace commsgd::kernels::cuda
