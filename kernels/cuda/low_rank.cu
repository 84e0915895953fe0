#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/low_rank.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/thread_layout.cuh"

namespace commsgd::kernels::cuda {
namespace {

constexpr int kThreads = detail::kStreamThreads;

// p = M·q: one warp a row of M, which it reads once for all r columns of q (r is small).
__global__ void multiply_kernel(const float* m, MatrixShape s, const float* q, float* p) {
  const std::size_t warps = grid_stride() / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  for (std::size_t i = first_thread() / kWarp; i < s.rows; i += warps) {
    const float* row = m + i * s.cols;
    for (std::size_t k = 0; k < s.rank; ++k) {
      const float* column = q + k * s.cols;
      float sum = 0;
      for (std::size_t j = lane; j < s.cols; j += kWarp) sum += row[j] * column[j];
      sum = warp_sum(sum);
      if (lane == 0) p[k * s.rows + i] = sum;
    }
  }
}

// q = Mᵀ·p: one thread an entry of q's columns; neighbouring threads read neighbouring entries
// of each row of M.
__global__ void multiply_transposed_kernel(const float* m, MatrixShape s, const float* p,
                                           float* q) {
  for (std::size_t at = first_thread(); at < s.cols * s.rank; at += grid_stride()) {
    const std::size_t k = at / s.cols, j = at - k * s.cols;
    const float* p_k = p + k * s.rows;
    float sum = 0;
    for (std::size_t i = 0; i < s.rows; ++i) sum += p_k[i] * m[i * s.cols + j];
    q[at] = sum;
  }
}

// M = p·qᵀ: one thread an entry of M.
__global__ void outer_product_kernel(const float* p, const float* q, MatrixShape s, float* m) {
  for (std::size_t at = first_thread(); at < s.rows * s.cols; at += grid_stride()) {
    const std::size_t i = at / s.cols, j = at - i * s.cols;
    float sum = 0;
    for (std::size_t k = 0; k < s.rank; ++k) sum += p[k * s.rows + i] * q[k * s.cols + j];
    m[at] = sum;
  }
}

// Σ a_i·b_i over the block, the same value returned to every thread.
__device__ float block_dot(const float* a, const float* b, std::size_t n) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ float result;
  float mine = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) mine += a[i] * b[i];
  const float sum = Reduce(temp).Sum(mine);
  if (threadIdx.x == 0) result = sum;
  __syncthreads();
  const float shared = result;
  __syncthreads();  // before the next call reuses temp and result
  return shared;
}

__global__ void orthonormalize_kernel(float* columns, std::size_t length, std::size_t rank) {
  for (std::size_t k = 0; k < rank; ++k) {
    float* column = columns + k * length;
    const float norm = sqrtf(block_dot(column, column, length));
    if (norm > 0) {
      for (std::size_t i = threadIdx.x; i < length; i += blockDim.x) column[i] /= norm;
    }
    __syncthreads();
    for (std::size_t later = k + 1; later < rank; ++later) {
      float* rest = columns + later * length;
      const float projection = block_dot(column, rest, length);
      for (std::size_t i = threadIdx.x; i < length; i += blockDim.x) {
        rest[i] -= projection * column[i];
      }
      __syncthreads();
    }
  }
}

}  // namespace

void multiply(const float* m, MatrixShape shape, const float* q, float* p, cudaStream_t stream) {
  if (shape.rows == 0 || shape.rank == 0) return;
  multiply_kernel<<<detail::stream_grid(shape.rows * kWarp), kThreads, 0, stream>>>(m, shape, q, p);
  check_launch("cuda multiply");
}

void multiply_transposed(const float* m, MatrixShape shape, const float* p, float* q,
                         cudaStream_t stream) {
  if (shape.cols == 0 || shape.rank == 0) return;
  multiply_transposed_kernel<<<detail::stream_grid(shape.cols * shape.rank), kThreads, 0, stream>>>(
      m, shape, p, q);
  check_launch("cuda multiply_transposed");
}

void outer_product(const float* p, const float* q, MatrixShape shape, float* m,
                   cudaStream_t stream) {
  if (shape.rows == 0 || shape.cols == 0) return;
  outer_product_kernel<<<detail::stream_grid(shape.rows * shape.cols), kThreads, 0, stream>>>(
      p, q, shape, m);
  check_launch("cuda outer_product");
}

void orthonormalize_columns(float* columns, std::size_t length, std::size_t rank,
                            cudaStream_t stream) {
  if (length == 0 || rank == 0) return;
  orthonormalize_kernel<<<1, kThreads, 0, stream>>>(columns, length, rank);
  check_launch("cuda orthonormalize_columns");
}

}  // namespace commsgd::kernels::cuda
