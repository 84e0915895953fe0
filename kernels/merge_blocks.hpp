#pragma once

// The steps of gTop-k's merge (sparse_ops.cpp, merge_keep_k) a block of entries at a time, for
// the CPUs that have the instructions: AVX-512 (merge_avx512.cpp, 16 entries a block) and AVX2
// (merge_avx2.cpp, 8). The same output, bit for bit, as the portable loops of sparse_ops.cpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace commsgd::kernels::detail {

// One sorted side of a merge: n entries, strictly increasing indices; tags may be null.
struct MergeSide {
  const std::uint32_t* indices;
  const float* values;
  const std::uint32_t* tags;
  std::size_t n;
};

// One run of a block merge: a's entries [i, i_end) with b's [j, j_end), written from position
// i + j.
struct MergeRun {
  std::size_t i, i_end, j, j_end;
  bool has_block(std::size_t width) const { return i + width <= i_end && j + width <= j_end; }
};

// A block merge in two runs, cut at a's middle entry and b's first at or past its index, whose
// blocks alternate: a block waits on the one before in its run (its loads start where that one
// stopped), and the other run's block fills that wait. Two runs, not four: where it was
// measured, four were slower than two (docs/design.md, "Aggregations"; one machine's times are in
// results/notes-from-code.md).
inline std::pair<MergeRun, MergeRun> two_runs(MergeSide a, MergeSide b) {
  const std::size_t ia = a.n / 2;
  const std::size_t jb =
      ia == a.n ? b.n
                : static_cast<std::size_t>(
                      std::lower_bound(b.indices, b.indices + b.n, a.indices[ia]) - b.indices);
  return {{0, ia, 0, jb}, {ia, a.n, jb, b.n}};
}

// The end of a run, with fewer than a block left on a side: one entry at a time.
template <bool Tagged>
inline void merge_entries(MergeSide a, MergeSide b, MergeRun run, std::uint32_t* out_indices,
                          float* out_values, std::uint32_t* out_tags) {
  while (run.i < run.i_end || run.j < run.j_end) {
    const bool mine =
        run.j == run.j_end || (run.i < run.i_end && a.indices[run.i] <= b.indices[run.j]);
    const MergeSide& side = mine ? a : b;
    std::size_t& at = mine ? run.i : run.j;
    const std::size_t t = run.i + run.j;
    out_indices[t] = side.indices[at];
    out_values[t] = side.values[at];
    if constexpr (Tagged) out_tags[t] = side.tags[at];
    ++at;
  }
}

// Entries of a merge as merge_keep_k's passes read and write them; tags may be null.
struct MergedEntries {
  std::uint32_t* indices;
  float* values;
  std::uint32_t* tags;
};

// One instruction set's version of each step. The passes take whole blocks of `width` entries
// and return where they stopped; the portable loops do the rest from there, so each pass's
// per-entry arithmetic is written once.
struct MergeBlocks {
  std::size_t width;

  // a and b merged by index as multisets, a's entry before b's on a shared index, into the
  // arrays at out_* (room for a.n + b.n each; out_tags only when both sides have tags).
  void (*merge_as_multisets)(MergeSide a, MergeSide b, std::uint32_t* out_indices,
                             float* out_values, std::uint32_t* out_tags);

  // The check of the inputs (strictly_increasing): ORs into `descents` whether
  // indices[i] <= indices[i − 1] for any i of the whole blocks from i = 1.
  std::size_t (*order)(const std::uint32_t* indices, std::size_t n, std::uint32_t& descents);

  // The keep pass (keep_at_least) over the m merged entries, from entry t: the blocks holding
  // no shared index, whose entries with key (abs_key) at least `low` go to `to` at `kept`, in
  // order. Stops at a block with a shared index, or with fewer than `width` left.
  std::size_t (*keep)(MergedEntries from, std::size_t m, std::int32_t low, MergedEntries to,
                      std::size_t t, std::size_t& kept);

  // The bracket (gather_bracket) over n entries (all at least low): those with key at most
  // `high`, each packed above its position as (key << 32) | (2^32 − 1 − t), to `bracket` at
  // `gathered` (room for n); counts in `above` those beyond high.
  std::size_t (*gather_bracket)(const float* values, std::size_t n, std::int32_t high,
                                std::uint64_t* bracket, std::size_t& gathered, std::size_t& above);

  // The last step (write_kept): the entries of `from` not after the selection's cut (as `mark`
  // below), in order, to `to` at `written`, which has room for n + 16 (whole blocks are stored
  // past the last one).
  std::size_t (*write_kept)(MergedEntries from, std::size_t n, std::int32_t cut_key,
                            std::uint32_t cut_index, MergedEntries to, std::size_t& written);

  // The marks of one input (mark_kept) over its n entries: marks[i] = 1 where entry i is not
  // after the selection's cut, its key above cut_key, or equal to it with index at most
  // cut_index; else 0.
  std::size_t (*mark)(const float* values, const std::uint32_t* indices, std::size_t n,
                      std::int32_t cut_key, std::uint32_t cut_index, std::uint8_t* marks);
};

#if defined(__x86_64__)
extern const MergeBlocks kAvx512MergeBlocks;
extern const MergeBlocks kAvx2MergeBlocks;
#endif

// The blocks merge_keep_k takes on this CPU (merge_simd_path() in sparse_ops.hpp), or null for
// the portable loops. Decided once per process.
const MergeBlocks* merge_blocks();

}  // namespace commsgd::kernels::detail
