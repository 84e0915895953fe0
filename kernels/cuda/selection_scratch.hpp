#pragma once

// The state the CUDA selectors keep on the device between their kernels. Plain structs, so the
// host-side classes can own them without seeing device code.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/device_array.hpp"

namespace commsgd::kernels::cuda {

// What a selection keeps, in the selection order of kernels/abs_order.hpp: every entry whose key
// is greater than `key`, and the first `equal_taken` (by position) whose key equals it.
struct SelectionBound {
  std::int32_t key = 0;
  std::uint32_t equal_taken = 0;
};

// Radix select over the 31 key bits in three digits (the CPU's rank_key digits).
inline constexpr int kRadixBins = 2048;
struct RadixState {
  std::uint32_t histogram[kRadixBins];
  std::uint32_t prefix;
  std::uint32_t prefix_mask;
  std::uint32_t remaining;  // rank still to find among the entries that match the prefix
};

// Per-tile counts of an order-preserving compaction: a tile is kTileThreads × kTileRows
// consecutive entries.
inline constexpr int kTileThreads = 256;
inline constexpr int kTileRows = 16;
inline constexpr std::size_t kTileSize = kTileThreads * kTileRows;
struct CompactionScratch {
  DeviceArray<std::uint32_t> greater, equal, equal_before, offset;
  void reserve(std::size_t tiles, cudaStream_t stream) {
    greater.reserve(tiles, stream);
    equal.reserve(tiles, stream);
    equal_before.reserve(tiles, stream);
    offset.reserve(tiles, stream);
  }
};

struct SelectionScratch {
  DeviceArray<RadixState> radix;
  DeviceArray<SelectionBound> bound;
  CompactionScratch tiles;
};

}  // namespace commsgd::kernels::cuda
