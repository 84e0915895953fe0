#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/thread_layout.cuh"
#include "kernels/cuda/vector_ops.hpp"

namespace commsgd::kernels::cuda {
namespace {

// Every kernel here is a grid-stride loop over n entries.
__global__ void add_kernel(float* acc, const float* g, std::size_t n) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) acc[i] = __fadd_rn(acc[i], g[i]);
}

__global__ void scale_kernel(float* x, std::size_t n, float factor) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) x[i] = __fmul_rn(x[i], factor);
}

__global__ void subtract_kernel(float* x, const float* y, std::size_t n) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) x[i] = __fsub_rn(x[i], y[i]);
}

__global__ void add_blocks_kernel(float* x, const float* blocks, std::size_t n,
                                  std::size_t block_count, float share) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    float sum = x[i];
    for (std::size_t b = 0; b < block_count; ++b) sum = __fadd_rn(sum, blocks[b * n + i]);
    x[i] = __fmul_rn(sum, share);
  }
}

__global__ void add_difference_kernel(float* x, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    x[i] = __fadd_rn(x[i], __fsub_rn(a[i], b[i]));
  }
}

// Σ (x − y)² (Σ x² with y null): one partial sum per block, in shared memory then atomically into
// *sum.
__global__ void squared_distance_kernel(const float* x, const float* y, std::size_t n,
                                        double* sum) {
  __shared__ double partial[detail::kStreamThreads];
  double mine = 0;
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    const double v = static_cast<double>(x[i]) - (y == nullptr ? 0.0 : y[i]);
    mine += v * v;
  }
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

template <bool kNesterov>
__global__ void sgd_kernel(float* p, const float* g, float* buf, std::size_t n, float lr, float mu,
                           float wd) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    const float d = __fadd_rn(g[i], __fmul_rn(wd, p[i]));
    buf[i] = __fadd_rn(__fmul_rn(mu, buf[i]), d);
    const float step = kNesterov ? __fadd_rn(d, __fmul_rn(mu, buf[i])) : buf[i];
    p[i] = __fsub_rn(p[i], __fmul_rn(lr, step));
  }
}

__global__ void to_half_kernel(const float* x, std::uint16_t* out, std::size_t n, bool bf16) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    out[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x[i]))
                  : __half_as_ushort(__float2half_rn(x[i]));
  }
}

__global__ void from_half_kernel(const std::uint16_t* h, float* out, std::size_t n, bool bf16) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    out[i] =
        bf16 ? __bfloat162float(__ushort_as_bfloat16(h[i])) : __half2float(__ushort_as_half(h[i]));
  }
}

}  // namespace

void add(float* acc, const float* g, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(acc, g, n);
  check_launch("cuda add");
}

void scale(float* x, std::size_t n, float factor, cudaStream_t stream) {
  if (n == 0) return;
  scale_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(x, n, factor);
  check_launch("cuda scale");
}

void subtract(float* x, const float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  subtract_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(x, y, n);
  check_launch("cuda subtract");
}

void add_blocks(float* x, const float* blocks, std::size_t n, std::size_t block_count, float share,
                cudaStream_t stream) {
  if (n == 0) return;
  add_blocks_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(
      x, blocks, n, block_count, share);
  check_launch("cuda add_blocks");
}

void add_difference(float* x, const float* a, const float* b, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_difference_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(x, a, b, n);
  check_launch("cuda add_difference");
}

double squared_norm(const float* x, std::size_t n, cudaStream_t stream) {
  return squared_distance(x, nullptr, n, stream);
}

double squared_distance(const float* a, const float* b, std::size_t n, cudaStream_t stream) {
  if (n == 0) return 0;
  return device_sum(stream, [&](double* sum) {
    squared_distance_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(a, b, n,
                                                                                           sum);
    check_launch("cuda squared_distance");
  });
}

void sgd_step(float* params, const float* grads, float* momentum_buffer, std::size_t n,
              const SgdHyperParams& hp, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = detail::stream_grid(n);
  if (hp.nesterov) {
    sgd_kernel<true><<<blocks, detail::kStreamThreads, 0, stream>>>(
        params, grads, momentum_buffer, n, hp.lr, hp.momentum, hp.weight_decay);
  } else {
    sgd_kernel<false><<<blocks, detail::kStreamThreads, 0, stream>>>(
        params, grads, momentum_buffer, n, hp.lr, hp.momentum, hp.weight_decay);
  }
  check_launch("cuda sgd_step");
}

void to_half(const float* x, std::uint16_t* out, std::size_t n, bool bf16, cudaStream_t stream) {
  if (n == 0) return;
  to_half_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(x, out, n, bf16);
  check_launch("cuda to_half");
}

void from_half(const std::uint16_t* h, float* out, std::size_t n, bool bf16, cudaStream_t stream) {
  if (n == 0) return;
  from_half_kernel<<<detail::stream_grid(n), detail::kStreamThreads, 0, stream>>>(h, out, n, bf16);
  check_launch("cuda from_half");
}

}  // namespace commsgd::kernels::cuda
