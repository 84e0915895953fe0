#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/sign_bits.hpp"
#include "kernels/cuda/thread_layout.cuh"
#include "kernels/sign_bits.hpp"

namespace commsgd::kernels::cuda {
namespace {

constexpr int kThreads = detail::kStreamThreads;
static_assert(kThreads % 32 == 0, "a block is whole warps");

// Thread i votes for entry i; a warp's ballot is the 32 bits of entries 32h .. 32h + 31, half h of
// the little-endian words (the low half of word h / 2 where h is even). The loop runs to the end
// of the last word, so every warp goes round it together and the unused bits are written 0.
__global__ void pack_signs_kernel(const float* v, std::size_t n, std::uint32_t* halves,
                                  std::size_t entries_to_end) {
  for (std::size_t i = first_thread(); i < entries_to_end; i += grid_stride()) {
    const bool negative = i < n && v[i] < 0.0f;
    const std::uint32_t ballot = __ballot_sync(0xffffffffu, negative);
    if (threadIdx.x % 32 == 0) halves[i / 32] = ballot;
  }
}

__global__ void add_signs_kernel(const std::uint64_t* bits, std::size_t first, float scale,
                                 float* out, std::size_t n) {
  for (std::size_t j = first_thread(); j < n; j += grid_stride()) {
    const std::size_t i = first + j;
    const bool negative = (bits[i / kSignsPerWord] >> (i % kSignsPerWord)) & 1u;
    out[j] = __fadd_rn(out[j], negative ? -scale : scale);
  }
}

__global__ void sign_kernel(float* x, std::size_t n) {
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) {
    x[i] = static_cast<float>((x[i] > 0.0f) - (x[i] < 0.0f));
  }
}

// One partial sum per block, atomically into *sum.
__global__ void l1_kernel(const float* x, std::size_t n, double* sum) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  double mine = 0;
  for (std::size_t i = first_thread(); i < n; i += grid_stride()) mine += fabsf(x[i]);
  const double block = Reduce(temp).Sum(mine);
  if (threadIdx.x == 0) atomicAdd(sum, block);
}

}  // namespace

void pack_signs(const float* v, std::size_t n, std::uint64_t* bits, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t to_end = sign_words(n) * kSignsPerWord;
  pack_signs_kernel<<<detail::stream_grid(to_end), kThreads, 0, stream>>>(
      v, n, reinterpret_cast<std::uint32_t*>(bits), to_end);
  check_launch("cuda pack_signs");
}

void add_signs(const std::uint64_t* bits, std::size_t first, float scale, float* out, std::size_t n,
               cudaStream_t stream) {
  if (n == 0) return;
  add_signs_kernel<<<detail::stream_grid(n), kThreads, 0, stream>>>(bits, first, scale, out, n);
  check_launch("cuda add_signs");
}

void sign_in_place(float* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  sign_kernel<<<detail::stream_grid(n), kThreads, 0, stream>>>(x, n);
  check_launch("cuda sign_in_place");
}

double l1_norm(const float* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return 0;
  return device_sum(stream, [&](double* sum) {
    l1_kernel<<<detail::stream_grid(n), kThreads, 0, stream>>>(x, n, sum);
    check_launch("cuda l1_norm");
  });
}

}  // namespace commsgd::kernels::cuda
