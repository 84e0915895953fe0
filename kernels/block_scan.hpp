#pragma once

// Building blocks of the compaction passes. The loops over every entry have a fixed trip count:
// at -O2 GCC's very-cheap vectorizer cost model only vectorizes loops that need no scalar
// epilogue, and these are the loops that must vectorize.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/abs_order.hpp"

namespace commsgd::kernels {

// Two cache lines of floats per test. Measured against 8, 16 and 64: selections are sparse, so
// most blocks are rejected by one vectorized test, and a passing block costs a mispredicted
// branch plus a few cycles per entry that passes.
inline constexpr std::size_t kScanBlock = 32;

inline constexpr std::array<std::uint32_t, kScanBlock> kLaneBit = [] {
  std::array<std::uint32_t, kScanBlock> bits{};
  for (std::size_t j = 0; j < kScanBlock; ++j) bits[j] = std::uint32_t{1} << j;
  return bits;
}();

// Bit j set when p[j] passes t. The constant per-lane bits (a variable shift would not
// vectorize on SSE2) make it an and + or-reduction of one compare per entry.
inline std::uint32_t block_pass_mask(const float* __restrict p, AbsKey t) {
  std::uint32_t mask = 0;
  for (std::size_t j = 0; j < kScanBlock; ++j) {
    mask |= kLaneBit[j] & (0u - static_cast<std::uint32_t>(abs_key(p[j]) > t));
  }
  return mask;
}

// Appends the entries of p named by mask (index first + j) at values/indices[size]; returns the
// new size. Work per entry that passes, not per entry of the block.
inline std::size_t append_mask(const float* __restrict p, std::uint32_t mask, std::uint32_t first,
                               float* __restrict values, std::uint32_t* __restrict indices,
                               std::size_t size) {
  for (; mask != 0; mask &= mask - 1) {
    const int j = std::countr_zero(mask);
    values[size] = p[j];
    indices[size] = first + static_cast<std::uint32_t>(j);
    ++size;
  }
  return size;
}

// The same for the last, partial block: branch-free (store always, advance on a pass), so the
// buffers need n free slots.
inline std::size_t append_greater(const float* __restrict p, std::size_t n, std::uint32_t first,
                                  AbsKey t, float* __restrict values,
                                  std::uint32_t* __restrict indices, std::size_t size) {
  for (std::size_t j = 0; j < n; ++j) {
    values[size] = p[j];
    indices[size] = first + static_cast<std::uint32_t>(j);
    size += abs_key(p[j]) > t;
  }
  return size;
}

}  // namespace commsgd::kernels
