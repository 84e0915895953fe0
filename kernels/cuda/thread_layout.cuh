#pragma once

// Where a thread is, for the element-wise and warp-wise kernels (launched with
// detail::stream_grid): the grid-stride loop
//   for (std::size_t i = first_thread(); i < n; i += grid_stride()) ...
// so that any grid covers any n, and a warp's sum.

#include <cstddef>

// Internal linkage, as selection_core.cuh: each .cu file compiles what it uses.
namespace commsgd::kernels::cuda {
namespace {

inline constexpr int kWarp = 32;

__device__ __forceinline__ std::size_t first_thread() {
  return std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::size_t grid_stride() {
  return std::size_t{gridDim.x} * blockDim.x;
}

// The sum of x over the 32 lanes of a warp, in lane 0 (every lane must call it).
template <class T>
__device__ __forceinline__ T warp_sum(T x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    x += __shfl_down_sync(0xffffffffu, x, offset);
  }
  return x;
}

}  // namespace
}  // namespace commsgd::kernels::cuda
