#include <cfloat>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/abs_order.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/threshold.hpp"
#include "kernels/moments.hpp"

namespace commsgd::kernels::cuda {
namespace {

void check_size(std::size_t n, const char* who) {
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument(std::string(who) + ": more entries than uint32 indices address");
  }
}

__global__ void count_greater(detail::DenseEntries entries, std::size_t n, SelectionBound bound,
                              std::uint32_t* count) {
  const detail::TileCounts counts = detail::count_tile(entries, n, bound, blockIdx.x);
  if (threadIdx.x == 0 && counts.greater != 0) atomicAdd(count, counts.greater);
}

__global__ void set_bound(SelectionBound* bound, SelectionBound value) {
  *bound = value;
}

// ---- Gaussian-k ----------------------------------------------------------------------------

// Each block's Σ (x − shift) and Σ (x − shift)² in double, shift = x[0] when finite
// (kernels/moments.cpp), so that a mean far from zero does not cancel the variance away.
// Written per block and summed by one block in gaussian_start, in a fixed order: atomics would
// add them in arrival order, and the threshold could differ in its last bits from run to run.
__global__ void shifted_sums(const float* x, std::size_t n, double2* block_sums) {
  using Reduce = cub::BlockReduce<double, detail::kStreamThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  const float shift = isfinite(x[0]) ? x[0] : 0.0f;
  double sum = 0, squares = 0;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = static_cast<double>(x[i]) - shift;
    sum += v;
    squares += v * v;
  }
  sum = Reduce(reduce).Sum(sum);
  __syncthreads();
  squares = Reduce(reduce).Sum(squares);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = {sum, squares};
}

// μ and σ from the block sums; thr = float(|μ| + σ·z), z = Φ⁻¹(1 − ρ/2); a non-finite one
// becomes the largest float.
__global__ void gaussian_start(const float* x, std::size_t n, const double2* block_sums,
                               unsigned blocks, double z, GaussianState* state) {
  using Reduce = cub::BlockReduce<double, detail::kStreamThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  double sum = 0, squares = 0;
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) {
    sum += block_sums[b].x;
    squares += block_sums[b].y;
  }
  sum = Reduce(reduce).Sum(sum);
  __syncthreads();
  squares = Reduce(reduce).Sum(squares);
  if (threadIdx.x != 0) return;
  const double shift = isfinite(x[0]) ? x[0] : 0.0f;
  const double mean_shifted = sum / static_cast<double>(n);
  const double variance = squares / static_cast<double>(n) - mean_shifted * mean_shifted;
  const double thr = fabs(shift + mean_shifted) + sqrt(fmax(variance, 0.0)) * z;
  const float threshold = isfinite(thr) && thr <= FLT_MAX ? static_cast<float>(thr) : FLT_MAX;
  state->threshold = threshold;
  state->bound = {detail::key_threshold(threshold), 0};
  state->refinements = 0;
  state->count = 0;
  state->stale = 1;
}

// Counts the current threshold's tiles, unless the last count was already taken at it.
__global__ void gaussian_count(detail::DenseEntries entries, std::size_t n, GaussianState* state,
                               std::uint32_t* greater, std::uint32_t* equal) {
  if (state->stale == 0) return;
  const detail::TileCounts counts = detail::count_tile(entries, n, state->bound, blockIdx.x);
  if (threadIdx.x == 0) {
    greater[blockIdx.x] = counts.greater;
    equal[blockIdx.x] = 0;
    if (counts.greater != 0) atomicAdd(&state->count, counts.greater);
  }
}

// One refinement step: halve the threshold when fewer than 2k/3 passed, raise it by half when
// more than 4k/3 did. A count in range (or a third refinement made) leaves it, and the next
// gaussian_count returns at once.
__global__ void gaussian_refine(std::uint64_t k, GaussianState* state) {
  state->stale = 0;
  if (state->refinements >= 3) return;
  const std::uint64_t count = state->count;
  float threshold = state->threshold;
  if (3 * count < 2 * k) {
    threshold *= 0.5f;
  } else if (3 * count > 4 * k) {
    threshold *= 1.5f;
  } else {
    return;
  }
  ++state->refinements;
  state->threshold = threshold;
  state->bound = {detail::key_threshold(threshold), 0};
  state->count = 0;
  state->stale = 1;
}

}  // namespace

void count_abs_greater(const float* x, std::size_t n, float threshold, std::uint32_t* count,
                       cudaStream_t stream) {
  check_size(n, "cuda count_abs_greater");
  const SelectionBound bound{key_threshold(threshold), 0};
  check(cudaMemsetAsync(count, 0, sizeof *count, stream), "cuda count_abs_greater");
  if (n == 0) return;
  count_greater<<<detail::tile_count(n), kTileThreads, 0, stream>>>(detail::DenseEntries{x}, n,
                                                                    bound, count);
  check_launch("cuda count_abs_greater");
}

void ThresholdSelector::select(const float* x, std::size_t n, float threshold, DeviceSparseSet& out,
                               cudaStream_t stream) {
  check_size(n, "cuda select_abs_greater");
  const SelectionBound bound{key_threshold(threshold), 0};
  out.reserve(1, stream);
  if (n == 0) {
    check(cudaMemsetAsync(out.count.data(), 0, sizeof(std::uint32_t), stream),
          "cuda select_abs_greater");
    return;
  }
  scratch_.bound.reserve(1, stream);
  set_bound<<<1, 1, 0, stream>>>(scratch_.bound.data(), bound);
  const detail::DenseEntries entries{x};
  detail::count_selected(entries, n, scratch_.bound.data(), scratch_.tiles, stream);
  detail::write_selected(entries, n, scratch_.bound.data(), scratch_.tiles, out, stream);
}

void GaussianSelector::select(const float* x, std::size_t n, std::size_t k, double density,
                              DeviceSparseSet& out, cudaStream_t stream) {
  check_size(n, "cuda gaussian select");
  if (k < 1 || k > n) throw std::invalid_argument("cuda gaussian select: k outside [1, d]");
  if (!(density > 0.0 && density <= 1.0)) {
    throw std::invalid_argument("cuda gaussian select: density outside (0, 1]");
  }
  const unsigned blocks = detail::stream_grid(n);
  state_.reserve(1, stream);
  block_sums_.reserve(blocks, stream);
  tiles_.reserve(detail::tile_count(n), stream);
  out.reserve(1, stream);
  GaussianState* state = state_.data();
  const detail::DenseEntries entries{x};
  shifted_sums<<<blocks, detail::kStreamThreads, 0, stream>>>(x, n, block_sums_.data());
  gaussian_start<<<1, detail::kStreamThreads, 0, stream>>>(
      x, n, block_sums_.data(), blocks, normal_quantile(1.0 - density / 2.0), state);
  for (int tried = 0; tried <= 3; ++tried) {
    if (tried > 0) gaussian_refine<<<1, 1, 0, stream>>>(k, state);
    gaussian_count<<<detail::tile_count(n), kTileThreads, 0, stream>>>(
        entries, n, state, tiles_.greater.data(), tiles_.equal.data());
  }
  check_launch("cuda gaussian select");
  detail::write_selected(entries, n, &state->bound, tiles_, out, stream);
}

GaussianSelection GaussianSelector::last_selection(cudaStream_t stream) const {
  GaussianState state;
  check(cudaMemcpyAsync(&state, state_.data(), sizeof state, cudaMemcpyDeviceToHost, stream),
        "cuda gaussian last_selection");
  check(cudaStreamSynchronize(stream), "cuda gaussian last_selection");
  return {state.threshold, state.refinements};
}

}  // namespace commsgd::kernels::cuda
