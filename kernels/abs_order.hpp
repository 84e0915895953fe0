#pragma once

// The selection order every sparse kernel shares: larger |value| first; equal |value|: smaller
// index first. |x| is compared through its IEEE bit pattern with the sign bit cleared, read as a
// signed 32-bit key: that orders every non-negative float like its value, ranks NaN above +inf
// (so a NaN is surfaced by every selector, never hidden by a false comparison), and, being
// signed and never negative, compares with the plain SSE2 integer compare.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

using AbsKey = std::int32_t;

inline AbsKey abs_key(float v) {
  return std::bit_cast<AbsKey>(v) & 0x7fffffff;
}

// Key thresholds are strict: an entry passes t when abs_key > t, so t = -1 passes everything.
// The t that implements "|x| > threshold" (NaN entries pass); throws on a NaN threshold.
AbsKey key_threshold(float threshold);

// Indices are uint32: throws std::invalid_argument when x is longer than that can address.
void check_indexable(std::span<const float> x, const char* who);

// Where the r-th (1-based, r <= values.size()) entry in the selection order stands: its key, and
// how many entries with exactly that key the first r take (the earliest, by position). Radix
// select on the key bits, histograms on the stack: O(n), no allocation.
struct RankedKey {
  AbsKey key = 0;
  std::size_t equal_taken = 0;
};
RankedKey rank_key(std::span<const float> values, std::size_t r);

// n > k: moves the first k of the n entries (values[i], indices[i]) in the selection order to the
// front, in their original order (which is index order: position breaks ties in their place).
// Returns the key of the k-th.
AbsKey keep_top_k(float* values, std::uint32_t* indices, std::size_t n, std::size_t k);
// The same on a set; keeps all of it when it has at most k entries.
void keep_top_k(SparseSet& s, std::size_t k);

// The values of m (1 <= m <= x.size()) entries spread evenly over x, centred in their strides:
// deterministic, so every rank with the same data derives the same threshold.
void strided_sample(std::span<const float> x, std::size_t m, std::vector<float>& sample);

}  // namespace commsgd::kernels
