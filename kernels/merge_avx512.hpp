#pragma once

// The steps of gTop-k's merge (sparse_ops.cpp, merge_keep_k) with AVX-512, for the machines that
// have it: the same output, bit for bit, 16 entries an instruction where the scalar loops take one.

#include <cstddef>
#include <cstdint>
#include <utility>

namespace commsgd::kernels::detail {

// Whether merge_keep_k takes the functions below here: the CPU has AVX-512 F, VL and BW, and the
// environment variable COMMSGD_NO_AVX512 is not set (to compare the two paths on one machine, or
// to work around one). Decided once per process; calling them where it is false is an error.
bool avx512_merge_enabled();

// Whether the n indices increase strictly (merge_keep_k's check of its inputs).
bool strictly_increasing_avx512(const std::uint32_t* indices, std::size_t n);

// One sorted side of a merge: n entries, strictly increasing indices; tags may be null.
struct MergeSide {
  const std::uint32_t* indices;
  const float* values;
  const std::uint32_t* tags;
  std::size_t n;
};

// a and b merged by index as multisets, a's entry before b's on a shared index, into the arrays
// at out_* (room for a.n + b.n each; out_tags only when both sides have tags).
void merge_as_multisets_avx512(MergeSide a, MergeSide b, std::uint32_t* out_indices,
                               float* out_values, std::uint32_t* out_tags);

// Entries of a merge as merge_keep_k's passes read and write them; tags may be null.
struct MergedEntries {
  std::uint32_t* indices;
  float* values;
  std::uint32_t* tags;
};

// merge_keep_k's second step (keep_at_least): one pass over the m merged entries (from.indices[m]
// a sentinel unlike from.indices[m - 1]) that writes to `to`, in order, the union's entries whose
// key (abs_key) is at least `low`, a shared index (two neighbours) summed as a.value + b.value
// with the AND of the tags. Returns the union's size and how many were kept.
std::pair<std::size_t, std::size_t> keep_at_least_avx512(MergedEntries from, std::size_t m,
                                                         std::int32_t low, MergedEntries to);

// merge_keep_k's bracket (gather_bracket): the keys in [low, high] of n entries (all at least
// low), each packed above its position as (key << 32) | (2^32 − 1 − t), to `bracket` (room for n);
// returns how many, and counts those above high.
std::size_t gather_bracket_avx512(const float* values, std::size_t n, std::int32_t high,
                                  std::uint64_t* bracket, std::size_t& above);

// merge_keep_k's last step: the n entries of `from` whose dropped[t] is 0, in order, to `to`,
// which has room for n + 16 (whole blocks are stored past the last kept entry).
void write_kept_avx512(MergedEntries from, const std::uint8_t* dropped, std::size_t n,
                       MergedEntries to);

}  // namespace commsgd::kernels::detail
