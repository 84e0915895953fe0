#include <limits>
#include <stdexcept>
#include <utility>

#include "kernels/cuda/sampling.hpp"
#include "kernels/cuda/selection_core.cuh"
#include "kernels/sampling.hpp"

namespace commsgd::kernels::cuda {
namespace {

// sample[j] = x[j·n/m + n/(2m)], kernels/abs_order.cpp's strided_sample.
__global__ void gather_sample(const float* x, std::uint64_t n, std::uint64_t m, float* sample) {
  const std::uint64_t half_stride = n / (2 * m);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t j = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < m; j += stride) {
    sample[j] = x[j * n / m + half_stride];
  }
}

// The sample's rank-th key thr as the bound "key >= thr", i.e. "key > thr − 1" (thr >= 0: the
// rank is within the sample, so the radix select found a key).
__global__ void dgc_start(const SelectionBound* sample_bound, DgcState* state) {
  state->bound = {sample_bound->key - 1, 0};
  state->count = 0;
  state->too_many = 0;
}

// Each tile's count above the bound, and their total.
__global__ void dgc_count(detail::DenseEntries entries, std::size_t n, DgcState* state,
                          std::uint32_t* greater, std::uint32_t* equal) {
  const detail::TileCounts counts = detail::count_tile(entries, n, state->bound, blockIdx.x);
  if (threadIdx.x == 0) {
    greater[blockIdx.x] = counts.greater;
    equal[blockIdx.x] = 0;
    if (counts.greater != 0) atomicAdd(&state->count, counts.greater);
  }
}

// More than 4k/3 passed: look for x's k-th entry. Otherwise rank 0, which the passes skip.
__global__ void dgc_fallback_start(std::uint64_t k, DgcState* state, RadixState* radix) {
  const bool too_many = 3 * std::uint64_t{state->count} > 4 * k;
  if (threadIdx.x == 0) state->too_many = too_many;
  detail::radix_reset(radix, too_many ? static_cast<std::uint32_t>(k) : 0);
}

// With too many: x's top k becomes what is written, and its tiles are counted afresh. Nothing
// here reads state->bound, so one thread may set it while the others count.
__global__ void dgc_recount(detail::DenseEntries entries, std::size_t n, DgcState* state,
                            std::uint32_t* greater, std::uint32_t* equal) {
  if (state->too_many == 0) return;
  const SelectionBound bound = state->exact_bound;
  const detail::TileCounts counts = detail::count_tile(entries, n, bound, blockIdx.x);
  if (threadIdx.x == 0) {
    greater[blockIdx.x] = counts.greater;
    equal[blockIdx.x] = counts.equal;
    if (blockIdx.x == 0) state->bound = bound;
  }
}

// values[i] = x[indices[i]] for the k indices, and the set's count.
// 64-bit positions: a 32-bit one could wrap past 2^32 and below k again, and never end.
__global__ void gather_picked(const float* x, const std::uint32_t* indices, std::uint32_t k,
                              float* values, std::uint32_t* count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < k; i += stride) {
    values[i] = x[indices[i]];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *count = k;
}

}  // namespace

void DgcSelector::select(const float* x, std::size_t n, std::size_t k, DeviceSparseSet& out,
                         cudaStream_t stream) {
  if (k < 1 || k > n) throw std::invalid_argument("cuda dgc select: k outside [1, d]");
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("cuda dgc select: more entries than uint32 indices address");
  }
  const DgcSample sample = dgc_sample(n, k);
  sample_.reserve(sample.size, stream);
  state_.reserve(1, stream);
  scratch_.tiles.reserve(detail::tile_count(n), stream);
  out.reserve(4 * k / 3, stream);
  DgcState* state = state_.data();
  CompactionScratch& tiles = scratch_.tiles;
  const detail::DenseEntries entries{x};

  gather_sample<<<detail::stream_grid(sample.size), detail::kStreamThreads, 0, stream>>>(
      x, n, sample.size, sample_.data());
  detail::radix_select(detail::DenseEntries{sample_.data()}, sample.size,
                       static_cast<std::uint32_t>(sample.rank), scratch_, stream);
  dgc_start<<<1, 1, 0, stream>>>(scratch_.bound.data(), state);
  dgc_count<<<detail::tile_count(n), kTileThreads, 0, stream>>>(
      entries, n, state, tiles.greater.data(), tiles.equal.data());
  dgc_fallback_start<<<1, detail::kPickThreads, 0, stream>>>(k, state, scratch_.radix.data());
  detail::radix_passes(entries, n, scratch_.radix.data(), &state->exact_bound, stream);
  dgc_recount<<<detail::tile_count(n), kTileThreads, 0, stream>>>(
      entries, n, state, tiles.greater.data(), tiles.equal.data());
  check_launch("cuda dgc select");
  detail::write_selected(entries, n, &state->bound, tiles, out, stream);
}

RandomSelector::~RandomSelector() {
  if (copied_ != nullptr) {
    discard(cudaEventSynchronize(copied_));
    discard(cudaEventDestroy(copied_));
  }
  if (picked_ != nullptr) discard(cudaFreeHost(picked_));
}

void RandomSelector::select(const float* x, std::size_t n, std::size_t k, std::uint64_t seed,
                            DeviceSparseSet& out, cudaStream_t stream) {
  if (k < 1 || k > n) throw std::invalid_argument("cuda random select: k outside [1, d]");
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("cuda random select: more entries than uint32 indices address");
  }
  if (copied_ == nullptr) {
    check(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming), "cuda random select");
  }
  check(cudaEventSynchronize(copied_), "cuda random select");  // picked_ is free again
  if (capacity_ < k) {
    if (picked_ != nullptr) check(cudaFreeHost(std::exchange(picked_, nullptr)), "cudaFreeHost");
    capacity_ = 0;
    void* memory = nullptr;
    check(cudaMallocHost(&memory, k * sizeof(std::uint32_t)), "cudaMallocHost");
    picked_ = static_cast<std::uint32_t*>(memory);
    capacity_ = k;
  }
  host_.pick(n, k, seed, {picked_, k});
  out.reserve(k, stream);
  check(cudaMemcpyAsync(out.indices.data(), picked_, k * sizeof(std::uint32_t),
                        cudaMemcpyHostToDevice, stream),
        "cuda random select");
  check(cudaEventRecord(copied_, stream), "cuda random select");
  gather_picked<<<detail::stream_grid(k), detail::kStreamThreads, 0, stream>>>(
      x, out.indices.data(), static_cast<std::uint32_t>(k), out.values.data(), out.count.data());
  check_launch("cuda random select");
}

}  // namespace commsgd::kernels::cuda
