#include "kernels/merge_blocks.hpp"

// GCC 12 warns inside its own AVX-512 headers: their intrinsics pass an undefined vector as the
// masked-off source, which -Wmaybe-uninitialized takes for a read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>

// Compiled for AVX-512 function by function, so that the rest of the library, and machines
// without it, are untouched: merge_blocks() decides at run time.
#define COMMSGD_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,popcnt")))

namespace commsgd::kernels::detail {
namespace {

// sum + 1 in the lanes where mine is above theirs.
COMMSGD_AVX512 inline __m512i add_if_above(__m512i sum, __m512i mine, std::uint32_t theirs) {
  const __mmask16 above =
      _mm512_cmpgt_epu32_mask(mine, _mm512_set1_epi32(static_cast<int>(theirs)));
  return _mm512_mask_add_epi32(sum, above, sum, _mm512_set1_epi32(1));
}

// Writes the next 16 positions of a run: the 16 smallest of a's next 16 entries and b's next 16
// (a's first on a shared index). a's entry in lane l goes to l + #{b's 16 below it}, when that is
// under 16. Those counts are 16 compares of a's lanes with each of b's entries in turn, so a block
// depends on the one before only through how many it took from each side, not through a chain of
// single comparisons as the scalar merge does. An expanding load of each side then fills the lanes
// the positions left it, in order.
template <bool Tagged>
COMMSGD_AVX512 inline void merge_block(MergeSide a, MergeSide b, MergeRun& run,
                                       std::uint32_t* out_indices, float* out_values,
                                       std::uint32_t* out_tags) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const std::size_t i = run.i, j = run.j;
  const __m512i mine = _mm512_loadu_si512(a.indices + i);
  // Four sums of four compares each, so that the adds are not one chain of sixteen. Named
  // registers, not an array: GCC at -O2 keeps an array it indexes in a loop in memory.
  __m512i below0 = lane, below1 = _mm512_setzero_si512(), below2 = below1, below3 = below1;
  for (std::size_t r = j; r < j + 16; r += 4) {
    below0 = add_if_above(below0, mine, b.indices[r]);
    below1 = add_if_above(below1, mine, b.indices[r + 1]);
    below2 = add_if_above(below2, mine, b.indices[r + 2]);
    below3 = add_if_above(below3, mine, b.indices[r + 3]);
  }
  const __m512i at =
      _mm512_add_epi32(_mm512_add_epi32(below0, below1), _mm512_add_epi32(below2, below3));
  const __mmask16 taken_lanes = _mm512_cmplt_epu32_mask(at, _mm512_set1_epi32(16));
  const auto from_a = static_cast<__mmask16>(
      _mm512_mask_reduce_or_epi32(taken_lanes, _mm512_sllv_epi32(_mm512_set1_epi32(1), at)));
  const auto from_b = static_cast<__mmask16>(~from_a);
  const std::size_t t = i + j;
  _mm512_storeu_si512(out_indices + t, _mm512_mask_expandloadu_epi32(
                                           _mm512_maskz_expandloadu_epi32(from_b, b.indices + j),
                                           from_a, a.indices + i));
  _mm512_storeu_ps(out_values + t,
                   _mm512_mask_expandloadu_ps(_mm512_maskz_expandloadu_ps(from_b, b.values + j),
                                              from_a, a.values + i));
  if constexpr (Tagged) {
    _mm512_storeu_si512(
        out_tags + t, _mm512_mask_expandloadu_epi32(
                          _mm512_maskz_expandloadu_epi32(from_b, b.tags + j), from_a, a.tags + i));
  }
  const auto taken = static_cast<std::size_t>(__builtin_popcount(taken_lanes));
  run.i += taken;
  run.j += 16 - taken;
}

// Both runs' blocks, alternating, then the rest of each one entry at a time.
template <bool Tagged>
COMMSGD_AVX512 void merge_two_runs(MergeSide a, MergeSide b, std::uint32_t* out_indices,
                                   float* out_values, std::uint32_t* out_tags) {
  auto [first, second] = two_runs(a, b);
  while (first.has_block(16) && second.has_block(16)) {
    merge_block<Tagged>(a, b, first, out_indices, out_values, out_tags);
    merge_block<Tagged>(a, b, second, out_indices, out_values, out_tags);
  }
  for (MergeRun* run : {&first, &second}) {
    while (run->has_block(16)) merge_block<Tagged>(a, b, *run, out_indices, out_values, out_tags);
    merge_entries<Tagged>(a, b, *run, out_indices, out_values, out_tags);
  }
}

// The lanes of one block in `keep`, in order, to `to` at `at`: compressed into registers and
// stored whole (16 lanes), since on some cores a compressing store to memory is far slower than
// a compress into a register and a plain store (one machine's reading is in
// results/notes-from-code.md). The block's tags, at from.tags + t, are read only when the merge
// carries them.
template <bool Tagged>
COMMSGD_AVX512 inline void store_kept(__mmask16 keep, __m512i indices, __m512 values,
                                      MergedEntries from, std::size_t t, MergedEntries to,
                                      std::size_t at) {
  _mm512_storeu_si512(to.indices + at, _mm512_maskz_compress_epi32(keep, indices));
  _mm512_storeu_ps(to.values + at, _mm512_maskz_compress_ps(keep, values));
  if constexpr (Tagged) {
    _mm512_storeu_si512(to.tags + at,
                        _mm512_maskz_compress_epi32(keep, _mm512_loadu_si512(from.tags + t)));
  }
}

template <bool Tagged>
COMMSGD_AVX512 std::size_t keep_blocks(MergedEntries from, std::size_t m, std::int32_t low,
                                       MergedEntries to, std::size_t t, std::size_t& kept) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  const __m512i floor = _mm512_set1_epi32(low);
  // Two random selections share few indices, so almost every block has none and is kept by a
  // compare and a compress. Each block's kept entries are stored as 16 lanes: kept <= t, so the
  // lanes past them stay inside `to`'s m entries and are overwritten by the next block.
  for (; t + 16 <= m; t += 16) {
    const __m512i indices = _mm512_loadu_si512(from.indices + t);
    const __m512i next = _mm512_loadu_si512(from.indices + t + 1);  // at most the sentinel
    if (_mm512_cmpeq_epi32_mask(indices, next) != 0) break;
    const __m512 values = _mm512_loadu_ps(from.values + t);
    const __mmask16 keep =
        _mm512_cmpge_epi32_mask(_mm512_and_si512(_mm512_castps_si512(values), magnitude), floor);
    store_kept<Tagged>(keep, indices, values, from, t, to, kept);
    kept += static_cast<std::size_t>(__builtin_popcount(keep));
  }
  return t;
}

// The lanes not after the selection's cut: key above cut_key, or equal to it with index at most
// cut_index.
COMMSGD_AVX512 inline __mmask16 not_after_cut(__m512 values, __m512i indices, std::int32_t cut_key,
                                              std::uint32_t cut_index) {
  const __m512i keys = _mm512_and_si512(_mm512_castps_si512(values), _mm512_set1_epi32(0x7fffffff));
  const __m512i key = _mm512_set1_epi32(cut_key);
  const __mmask16 above = _mm512_cmpgt_epi32_mask(keys, key);
  const __mmask16 tied_before = _mm512_mask_cmple_epu32_mask(
      _mm512_cmpeq_epi32_mask(keys, key), indices, _mm512_set1_epi32(static_cast<int>(cut_index)));
  return above | tied_before;
}

template <bool Tagged>
COMMSGD_AVX512 std::size_t write_blocks(MergedEntries from, std::size_t n, std::int32_t cut_key,
                                        std::uint32_t cut_index, MergedEntries to,
                                        std::size_t& written) {
  std::size_t w = written, t = 0;
  for (; t + 16 <= n; t += 16) {
    const __m512i indices = _mm512_loadu_si512(from.indices + t);
    const __m512 values = _mm512_loadu_ps(from.values + t);
    const __mmask16 keep = not_after_cut(values, indices, cut_key, cut_index);
    store_kept<Tagged>(keep, indices, values, from, t, to, w);
    w += static_cast<std::size_t>(__builtin_popcount(keep));
  }
  written = w;
  return t;
}

COMMSGD_AVX512 std::size_t gather_bracket_blocks_avx512(const float* values, std::size_t n,
                                                        std::int32_t high, std::uint64_t* bracket,
                                                        std::size_t& gathered, std::size_t& above) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  const __m512i ceiling = _mm512_set1_epi32(high);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  std::size_t t = 0;
  // Each half of a block packs 8 keys with their positions into 64 bits and stores the ones in
  // the bracket as a whole register: gathered <= t, so the lanes past them stay inside n.
  for (; t + 16 <= n; t += 16) {
    const __m512i keys =
        _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(values + t)), magnitude);
    const __mmask16 outside = _mm512_cmpgt_epi32_mask(keys, ceiling);
    const auto inside = static_cast<unsigned>(static_cast<__mmask16>(~outside));
    const __m512i position = _mm512_sub_epi32(
        _mm512_set1_epi32(-1), _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(t))));
    for (int half = 0; half < 2; ++half) {
      const __m256i key8 =
          half == 0 ? _mm512_castsi512_si256(keys) : _mm512_extracti64x4_epi64(keys, 1);
      const __m256i position8 =
          half == 0 ? _mm512_castsi512_si256(position) : _mm512_extracti64x4_epi64(position, 1);
      const __m512i packed = _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(key8), 32),
                                             _mm512_cvtepu32_epi64(position8));
      const auto in_half = static_cast<__mmask8>(inside >> (8 * half));
      _mm512_storeu_si512(bracket + gathered, _mm512_maskz_compress_epi64(in_half, packed));
      gathered += static_cast<std::size_t>(__builtin_popcount(in_half));
    }
    above += static_cast<std::size_t>(__builtin_popcount(outside));
  }
  return t;
}

COMMSGD_AVX512 std::size_t order_blocks_avx512(const std::uint32_t* indices, std::size_t n,
                                               std::uint32_t& descents) {
  __mmask16 found = 0;
  std::size_t i = 1;
  for (; i + 16 <= n; i += 16) {
    found |= _mm512_cmple_epu32_mask(_mm512_loadu_si512(indices + i),
                                     _mm512_loadu_si512(indices + i - 1));
  }
  descents |= found;
  return i;
}

COMMSGD_AVX512 std::size_t mark_blocks_avx512(const float* values, const std::uint32_t* indices,
                                              std::size_t n, std::int32_t cut_key,
                                              std::uint32_t cut_index, std::uint8_t* marks) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 kept = not_after_cut(_mm512_loadu_ps(values + i),
                                         _mm512_loadu_si512(indices + i), cut_key, cut_index);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(marks + i), _mm_maskz_set1_epi8(kept, 1));
  }
  return i;
}

void merge_as_multisets_avx512(MergeSide a, MergeSide b, std::uint32_t* out_indices,
                               float* out_values, std::uint32_t* out_tags) {
  if (out_tags != nullptr) {
    merge_two_runs<true>(a, b, out_indices, out_values, out_tags);
  } else {
    merge_two_runs<false>(a, b, out_indices, out_values, out_tags);
  }
}

std::size_t keep_blocks_avx512(MergedEntries from, std::size_t m, std::int32_t low,
                               MergedEntries to, std::size_t t, std::size_t& kept) {
  return from.tags != nullptr ? keep_blocks<true>(from, m, low, to, t, kept)
                              : keep_blocks<false>(from, m, low, to, t, kept);
}

std::size_t write_kept_blocks_avx512(MergedEntries from, std::size_t n, std::int32_t cut_key,
                                     std::uint32_t cut_index, MergedEntries to,
                                     std::size_t& written) {
  return from.tags != nullptr ? write_blocks<true>(from, n, cut_key, cut_index, to, written)
                              : write_blocks<false>(from, n, cut_key, cut_index, to, written);
}

}  // namespace

const MergeBlocks kAvx512MergeBlocks{16,
                                     merge_as_multisets_avx512,
                                     order_blocks_avx512,
                                     keep_blocks_avx512,
                                     gather_bracket_blocks_avx512,
                                     write_kept_blocks_avx512,
                                     mark_blocks_avx512};

}  // namespace commsgd::kernels::detail
