#pragma once

// The two steps every CUDA selector is made of, shared by topk.cu, threshold.cu, sampling.cu and
// sparse_ops.cu:
//   radix select: the key of the r-th entry in the selection order, and how many entries with
//     exactly that key the first r take, found in three histogram passes, all on the device;
//   compaction: the entries a SelectionBound keeps, written in index order. A first pass counts
//     each tile, one block scans the counts, a second pass writes; a tile with nothing to keep
//     (most of them, in a sparse selection) returns after reading its count.
// Kernels only: the host learns no count and waits for nothing, so a selection can be enqueued
// between backward and the collective that sends it.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/cuda/selection_scratch.hpp"
#include "kernels/cuda/sparse_set.hpp"

// Internal linkage: each .cu file compiles the kernels it uses, with no device linking step.
namespace commsgd::kernels::cuda::detail {
namespace {

using AbsKey = std::int32_t;

// kernels/abs_order.hpp's order key: |v|'s bits read as a non-negative int32 (NaN above +inf).
__device__ __forceinline__ AbsKey abs_key(float v) {
  return __float_as_int(v) & 0x7fffffff;
}

// The key that implements "|x| > threshold" (kernels/abs_order.cpp), for a non-NaN threshold.
__device__ __forceinline__ AbsKey key_threshold(float threshold) {
  return threshold < 0.0f ? -1 : abs_key(threshold);
}

// Entry i of a dense vector.
struct DenseEntries {
  const float* x;
  __device__ AbsKey key(std::size_t i) const { return abs_key(x[i]); }
  __device__ float value(std::size_t i) const { return x[i]; }
  __device__ std::uint32_t index(std::size_t i) const { return static_cast<std::uint32_t>(i); }
};

// Slots with their keys worked out beforehand; key -1 marks an empty slot, which no bound keeps.
struct SlotEntries {
  const AbsKey* keys;
  const float* values;
  const std::uint32_t* indices;
  __device__ AbsKey key(std::size_t i) const { return keys[i]; }
  __device__ float value(std::size_t i) const { return values[i]; }
  __device__ std::uint32_t index(std::size_t i) const { return indices[i]; }
};

inline constexpr int kStreamThreads = 256;

// Blocks for a grid-stride pass over n entries: enough to fill the device several times over,
// never more than there are entries. The processor count is asked of the driver once per device.
inline unsigned stream_grid(std::size_t n) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  static thread_local int known_device = -1, processors = 0;
  if (device != known_device) {
    check(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute");
    known_device = device;
  }
  const std::size_t blocks = (n + kStreamThreads - 1) / kStreamThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, 8 * std::size_t(processors)));
}

inline std::size_t tile_count(std::size_t n) {
  return (n + kTileSize - 1) / kTileSize;
}

// ---- radix select --------------------------------------------------------------------------

struct RadixDigit {
  int shift, bits;
};
inline constexpr RadixDigit kRadixDigits[3] = {{21, 10}, {10, 11}, {0, 10}};
inline constexpr int kPickThreads = kRadixBins / 2;

// Starts a select of rank `rank` (0: nothing to find, the passes return at once). Called by one
// block, from whichever kernel knows the rank.
__device__ void radix_reset(RadixState* state, std::uint32_t rank) {
  for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x) state->histogram[b] = 0;
  if (threadIdx.x == 0) {
    state->prefix = 0;
    state->prefix_mask = 0;
    state->remaining = rank;
  }
}

__global__ void radix_start(RadixState* state, std::uint32_t rank) {
  radix_reset(state, rank);
}

// Counts the entries that match the digits fixed so far, by their next digit.
template <class Entries>
__global__ void radix_histogram(Entries entries, std::size_t n, RadixDigit digit,
                                RadixState* state) {
  __shared__ std::uint32_t bins[kRadixBins];
  for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  const std::uint32_t prefix = state->prefix, prefix_mask = state->prefix_mask;
  const std::uint32_t bucket_mask = (1u << digit.bits) - 1;
  if (state->remaining != 0) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    // The loop bound is the same for the whole block, so every lane reaches the warp match.
    for (std::size_t first = std::size_t{blockIdx.x} * blockDim.x; first < n; first += stride) {
      const std::size_t i = first + threadIdx.x;
      const AbsKey key = i < n ? entries.key(i) : -1;
      const auto bits = static_cast<std::uint32_t>(key);
      const int bin = key >= 0 && (bits & prefix_mask) == prefix
                          ? static_cast<int>((bits >> digit.shift) & bucket_mask)
                          : -1;
      // Gradient entries share a few exponents, so a warp's keys crowd into a few bins: one
      // shared-memory atomic per distinct bin instead of 32 colliding ones.
      const unsigned peers = __match_any_sync(0xffffffffu, bin);
      if (bin >= 0 && static_cast<int>(threadIdx.x % 32) == __ffs(peers) - 1) {
        atomicAdd(&bins[bin], static_cast<std::uint32_t>(__popc(peers)));
      }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x) {
    if (bins[b] != 0) atomicAdd(&state->histogram[b], bins[b]);
  }
}

// One block: fixes the digit whose bucket holds the entry of rank `remaining` (larger buckets
// first) and clears the histogram for the next digit. The first digit also clamps the rank to
// the entries there are (a merge of sets smaller than k keeps all of them); the last writes the
// bound.
__global__ void radix_pick(RadixState* state, RadixDigit digit, bool first, SelectionBound* bound) {
  using Scan = cub::BlockScan<std::uint32_t, kPickThreads>;
  __shared__ typename Scan::TempStorage scan;
  const int buckets = 1 << digit.bits;
  // Thread t holds the buckets of rank 2t and 2t + 1 in descending key order.
  int bucket[2];
  std::uint32_t count[2], before[2];
  for (int j = 0; j < 2; ++j) {
    bucket[j] = buckets - 1 - (2 * static_cast<int>(threadIdx.x) + j);
    count[j] = bucket[j] >= 0 ? state->histogram[bucket[j]] : 0;
  }
  std::uint32_t rank = state->remaining, total = 0;
  Scan(scan).ExclusiveSum(count, before, total);
  if (first) rank = min(rank, total);
  __syncthreads();
  for (int j = 0; j < 2; ++j) {
    if (bucket[j] >= 0) state->histogram[bucket[j]] = 0;
    if (rank != 0 && before[j] < rank && rank <= before[j] + count[j]) {
      const std::uint32_t prefix =
          state->prefix | (static_cast<std::uint32_t>(bucket[j]) << digit.shift);
      state->prefix = prefix;
      state->prefix_mask |= static_cast<std::uint32_t>(buckets - 1) << digit.shift;
      state->remaining = rank - before[j];
      if (bound != nullptr) *bound = {static_cast<AbsKey>(prefix), rank - before[j]};
    }
  }
  if (rank == 0 && threadIdx.x == 0) {
    state->remaining = 0;
    if (bound != nullptr) *bound = {INT_MAX, 0};  // nothing to select: a bound nothing passes
  }
}

// The digit passes of a select that radix_reset started: *bound = the bound that keeps the
// first min(rank, entries there are) entries ({INT_MAX, 0} for rank 0).
template <class Entries>
void radix_passes(Entries entries, std::size_t n, RadixState* state, SelectionBound* bound,
                  cudaStream_t stream) {
  const unsigned grid = stream_grid(n);
  for (int d = 0; d < 3; ++d) {
    radix_histogram<<<grid, kStreamThreads, 0, stream>>>(entries, n, kRadixDigits[d], state);
    radix_pick<<<1, kPickThreads, 0, stream>>>(state, kRadixDigits[d], d == 0,
                                               d == 2 ? bound : nullptr);
  }
  check_launch("radix select");
}

// scratch.bound = the bound that keeps the first min(rank, entries there are) entries.
template <class Entries>
void radix_select(Entries entries, std::size_t n, std::uint32_t rank, SelectionScratch& scratch,
                  cudaStream_t stream) {
  scratch.radix.reserve(1, stream);
  scratch.bound.reserve(1, stream);
  radix_start<<<1, kPickThreads, 0, stream>>>(scratch.radix.data(), rank);
  radix_passes(entries, n, scratch.radix.data(), scratch.bound.data(), stream);
}

// ---- compaction ----------------------------------------------------------------------------

struct TileCounts {
  std::uint32_t greater = 0, equal = 0;  // the block's totals, in thread 0
};

// Tile `tile`'s entries above the bound, and equal to it when some of those are taken.
template <class Entries>
__device__ TileCounts count_tile(Entries entries, std::size_t n, SelectionBound bound,
                                 std::size_t tile) {
  using Reduce = cub::BlockReduce<std::uint32_t, kTileThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  std::uint32_t greater = 0, equal = 0;
  for (int row = 0; row < kTileRows; ++row) {
    const std::size_t i = tile * kTileSize + std::size_t(row) * kTileThreads + threadIdx.x;
    if (i < n) {
      const AbsKey key = entries.key(i);
      greater += key > bound.key;
      equal += key == bound.key;
    }
  }
  TileCounts counts;
  counts.greater = Reduce(reduce).Sum(greater);
  if (bound.equal_taken != 0) {
    __syncthreads();
    counts.equal = Reduce(reduce).Sum(equal);
  }
  return counts;
}

template <class Entries>
__global__ void count_tiles(Entries entries, std::size_t n, const SelectionBound* bound,
                            std::uint32_t* greater, std::uint32_t* equal) {
  const TileCounts counts = count_tile(entries, n, *bound, blockIdx.x);
  if (threadIdx.x == 0) {
    greater[blockIdx.x] = counts.greater;
    equal[blockIdx.x] = counts.equal;
  }
}

// One block: where each tile's kept entries start in the output, how many equal entries come
// before the tile, and the total kept (the output's count).
inline constexpr int kScanThreads = 1024;
__global__ void scan_tiles(std::size_t tiles, const SelectionBound* bound,
                           const std::uint32_t* greater, const std::uint32_t* equal,
                           std::uint32_t* equal_before, std::uint32_t* offset,
                           std::uint32_t* total) {
  using Scan = cub::BlockScan<std::uint32_t, kScanThreads>;
  __shared__ typename Scan::TempStorage scan;
  const std::uint32_t equal_taken = bound->equal_taken;
  std::uint32_t equal_carry = 0, offset_carry = 0;
  for (std::size_t first = 0; first < tiles; first += kScanThreads) {
    const std::size_t tile = first + threadIdx.x;
    const bool inside = tile < tiles;
    const std::uint32_t tile_greater = inside ? greater[tile] : 0;
    const std::uint32_t tile_equal = inside ? equal[tile] : 0;
    std::uint32_t before = 0, chunk_equal = 0;
    Scan(scan).ExclusiveSum(tile_equal, before, chunk_equal);
    __syncthreads();
    before += equal_carry;
    const std::uint32_t equal_kept =
        before >= equal_taken ? 0 : min(tile_equal, equal_taken - before);
    std::uint32_t start = 0, chunk_kept = 0;
    Scan(scan).ExclusiveSum(tile_greater + equal_kept, start, chunk_kept);
    __syncthreads();
    if (inside) {
      equal_before[tile] = before;
      offset[tile] = offset_carry + start;
    }
    equal_carry += chunk_equal;
    offset_carry += chunk_kept;
  }
  if (threadIdx.x == 0) *total = offset_carry;
}

// Writes the kept entries of each tile from its offset on; those beyond `capacity` are dropped.
template <class Entries>
__global__ void write_tiles(Entries entries, std::size_t n, const SelectionBound* bound_at,
                            const std::uint32_t* greater, const std::uint32_t* equal,
                            const std::uint32_t* equal_before, const std::uint32_t* offset,
                            float* values, std::uint32_t* indices, std::size_t capacity) {
  const std::size_t tile = blockIdx.x;
  const SelectionBound bound = *bound_at;
  const std::uint32_t equal_first = equal_before[tile];
  const bool takes_equal = equal[tile] != 0 && equal_first < bound.equal_taken;
  if (greater[tile] == 0 && !takes_equal) return;
  // Only in the tile where the taken equal entries run out do they need ranking.
  const bool ranks_equal = takes_equal && equal_first + equal[tile] > bound.equal_taken;
  using Scan = cub::BlockScan<std::uint32_t, kTileThreads>;
  __shared__ typename Scan::TempStorage scan;
  std::uint32_t written = offset[tile], equal_seen = equal_first;
  for (int row = 0; row < kTileRows; ++row) {
    const std::size_t i = tile * kTileSize + std::size_t(row) * kTileThreads + threadIdx.x;
    const AbsKey key = i < n ? entries.key(i) : -1;
    const bool is_equal = i < n && key == bound.key;
    bool take = i < n && key > bound.key;
    if (ranks_equal) {
      std::uint32_t rank = 0, row_equal = 0;
      Scan(scan).ExclusiveSum(std::uint32_t{is_equal}, rank, row_equal);
      __syncthreads();
      take = take || (is_equal && equal_seen + rank < bound.equal_taken);
      equal_seen += row_equal;
    } else {
      take = take || (is_equal && takes_equal);
    }
    std::uint32_t position = 0, row_taken = 0;
    Scan(scan).ExclusiveSum(std::uint32_t{take}, position, row_taken);
    __syncthreads();
    if (take && written + position < capacity) {
      values[written + position] = entries.value(i);
      indices[written + position] = entries.index(i);
    }
    written += row_taken;
  }
}

// The tile counts of `entries` against `bound` (a device pointer: a kernel may have set it).
template <class Entries>
void count_selected(Entries entries, std::size_t n, const SelectionBound* bound,
                    CompactionScratch& tiles, cudaStream_t stream) {
  const std::size_t count = tile_count(n);
  tiles.reserve(count, stream);
  count_tiles<<<count, kTileThreads, 0, stream>>>(entries, n, bound, tiles.greater.data(),
                                                  tiles.equal.data());
  check_launch("count tiles");
}

// Given the tile counts: out = the entries `bound` keeps, in index order; out.count = how many.
template <class Entries>
void write_selected(Entries entries, std::size_t n, const SelectionBound* bound,
                    CompactionScratch& tiles, DeviceSparseSet& out, cudaStream_t stream) {
  const std::size_t count = tile_count(n);
  out.reserve(1, stream);
  scan_tiles<<<1, kScanThreads, 0, stream>>>(count, bound, tiles.greater.data(), tiles.equal.data(),
                                             tiles.equal_before.data(), tiles.offset.data(),
                                             out.count.data());
  write_tiles<<<count, kTileThreads, 0, stream>>>(
      entries, n, bound, tiles.greater.data(), tiles.equal.data(), tiles.equal_before.data(),
      tiles.offset.data(), out.values.data(), out.indices.data(), out.capacity());
  check_launch("write selected");
}

}  // namespace
}  // namespace commsgd::kernels::cuda::detail
