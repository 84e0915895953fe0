#pragma once

// The steps of gTop-k's merge (sparse_ops.cpp, merge_keep_k) with AVX-512, for the machines that
// have it: the same output, bit for bit, 16 entries an instruction where the scalar loops take one.

#include <cstddef>
#include <cstdint>

namespace commsgd::kernels::detail {

// Whether merge_keep_k takes the functions below here: the CPU has AVX-512 F, VL and BW, and the
// environment variable COMMSGD_NO_AVX512 is not set (to compare the two paths on one machine, or
// to work around one). Decided once per process; calling them where it is false is an error.
bool avx512_merge_enabled();

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

// The passes below take whole blocks of 16 and return where they stopped; the scalar loops of
// sparse_ops.cpp do the rest from there, so each pass's per-entry arithmetic is written once.

// merge_keep_k's check of its inputs (strictly_increasing): ORs into `descents` whether
// indices[i] <= indices[i − 1] for any i of the whole blocks from i = 1.
std::size_t order_blocks_avx512(const std::uint32_t* indices, std::size_t n,
                                std::uint32_t& descents);

// merge_keep_k's keep pass (keep_at_least) over the m merged entries, from entry t: the blocks
// holding no shared index, whose entries with key (abs_key) at least `low` go to `to` at `kept`,
// in order. Stops at a block with a shared index, or with fewer than 16 left.
std::size_t keep_blocks_avx512(MergedEntries from, std::size_t m, std::int32_t low,
                               MergedEntries to, std::size_t t, std::size_t& kept);

// merge_keep_k's bracket (gather_bracket) over n entries (all at least low): those with key at
// most `high`, each packed above its position as (key << 32) | (2^32 − 1 − t), to `bracket` at
// `gathered` (room for n); counts in `above` those beyond high.
std::size_t gather_bracket_blocks_avx512(const float* values, std::size_t n, std::int32_t high,
                                         std::uint64_t* bracket, std::size_t& gathered,
                                         std::size_t& above);

// merge_keep_k's last step (write_kept): the entries of `from` not after the selection's cut (as
// mark_blocks_avx512 below), in order, to `to` at `written`, which has room for n + 16 (whole
// blocks are stored past the last one).
std::size_t write_kept_blocks_avx512(MergedEntries from, std::size_t n, std::int32_t cut_key,
                                     std::uint32_t cut_index, MergedEntries to,
                                     std::size_t& written);

// merge_keep_k's marks of one input (mark_kept) over its n entries: marks[i] = 1 where entry i is
// not after the selection's cut, its key above cut_key, or equal to it with index at most
// cut_index; else 0.
std::size_t mark_blocks_avx512(const float* values, const std::uint32_t* indices, std::size_t n,
                               std::int32_t cut_key, std::uint32_t cut_index, std::uint8_t* marks);

}  // namespace commsgd::kernels::detail
