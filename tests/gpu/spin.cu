#include "kernels/cuda/device_array.hpp"
#include "tests/gpu/spin.hpp"

namespace commsgd::testing {
namespace {

__device__ unsigned long long global_nanoseconds() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void spin_kernel(unsigned long long nanoseconds) {
  const unsigned long long start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) __nanosleep(10000);
}

}  // namespace

void spin(cudaStream_t stream, std::chrono::milliseconds duration) {
  const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(duration);
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(nanoseconds.count()));
  kernels::cuda::check_launch("spin_kernel");
}

}  // namespace commsgd::testing
