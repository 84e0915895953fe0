#include <immintrin.h>

#include <array>
#include <cstring>

#include "kernels/merge_blocks.hpp"

// Compiled for AVX2 function by function, as merge_avx512.cpp for AVX-512: merge_blocks()
// decides at run time. The steps are merge_avx512.cpp's with 8 lanes; what AVX2 lacks (lane
// masks, compress and expand, unsigned compares) is built from what it has.
#define COMMSGD_AVX2 __attribute__((target("avx2,popcnt")))

namespace commsgd::kernels::detail {
namespace {

constexpr std::size_t kWidth = 8;

// A lane permutation for _mm256_permutevar8x32, its 8 source lanes packed 4 bits apiece, chosen
// by an 8-bit lane mask: compress moves the set lanes, in order, to the front; expand moves the
// front lanes, in order, to the set lanes (the others get lanes nobody reads).
using PermutationTable = std::array<std::uint32_t, 256>;
constexpr PermutationTable permutation_table(bool compress) {
  PermutationTable table{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    unsigned next = 0;
    for (unsigned lane = 0; lane < kWidth; ++lane) {
      if (((mask >> lane) & 1u) == 0) continue;
      table[mask] |= compress ? lane << (4 * next) : next << (4 * lane);
      ++next;
    }
  }
  return table;
}
constexpr PermutationTable kCompress = permutation_table(true);
constexpr PermutationTable kExpand = permutation_table(false);

// marks for mark_blocks: byte l of entry m is bit l of m.
constexpr std::array<std::uint64_t, 256> kMarkBytes = [] {
  std::array<std::uint64_t, 256> table{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    for (unsigned lane = 0; lane < kWidth; ++lane) {
      table[mask] |= static_cast<std::uint64_t>((mask >> lane) & 1u) << (8 * lane);
    }
  }
  return table;
}();

// A 4-lane mask of 64-bit lanes as the 8-lane mask of their 32-bit halves.
constexpr unsigned halves_of(unsigned mask4) {
  unsigned mask8 = 0;
  for (unsigned lane = 0; lane < 4; ++lane) mask8 |= ((mask4 >> lane) & 1u) * (3u << (2 * lane));
  return mask8;
}

COMMSGD_AVX2 inline __m256i permutation(std::uint32_t packed) {
  return _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(packed)),
                                            _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                          _mm256_set1_epi32(kWidth - 1));
}

// All ones in the lanes set in an 8-bit mask.
COMMSGD_AVX2 inline __m256i lanes_of(unsigned mask) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(mask)), bit), bit);
}

COMMSGD_AVX2 inline unsigned mask_of(__m256i lanes) {
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(lanes)));
}

// x <= y as unsigned 32-bit integers, lane by lane.
COMMSGD_AVX2 inline __m256i at_most_u32(__m256i x, __m256i y) {
  return _mm256_cmpeq_epi32(_mm256_max_epu32(x, y), y);
}

COMMSGD_AVX2 inline unsigned or_of_lanes(__m256i v) {
  __m128i x = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  x = _mm_or_si128(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
  x = _mm_or_si128(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
  return static_cast<unsigned>(_mm_cvtsi128_si32(x));
}

COMMSGD_AVX2 inline __m256i load(const std::uint32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
COMMSGD_AVX2 inline void store(std::uint32_t* p, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

// The next 8 positions of a run, as merge_avx512.cpp's merge_block: a's entry in lane l goes to
// l + #{b's next 8 below it} when that is under 8, and b's next entries fill the other positions
// in order. Unsigned compares are signed ones with the top bit flipped on both sides.
template <bool Tagged>
COMMSGD_AVX2 inline void merge_block(MergeSide a, MergeSide b, MergeRun& run,
                                     std::uint32_t* out_indices, float* out_values,
                                     std::uint32_t* out_tags) {
  constexpr std::uint32_t kFlip = 0x80000000u;
  const std::size_t i = run.i, j = run.j;
  const __m256i a_indices = load(a.indices + i);
  const __m256i mine = _mm256_xor_si256(a_indices, _mm256_set1_epi32(static_cast<int>(kFlip)));
  // Two sums of four compares each (a compare's true is −1), so that the adds are not one chain.
  __m256i below0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), below1 = _mm256_setzero_si256();
  for (std::size_t r = j; r < j + kWidth; r += 2) {
    below0 = _mm256_sub_epi32(
        below0,
        _mm256_cmpgt_epi32(mine, _mm256_set1_epi32(static_cast<int>(b.indices[r] ^ kFlip))));
    below1 = _mm256_sub_epi32(
        below1,
        _mm256_cmpgt_epi32(mine, _mm256_set1_epi32(static_cast<int>(b.indices[r + 1] ^ kFlip))));
  }
  const __m256i at = _mm256_add_epi32(below0, below1);  // at most 15: the bits past 7 drop
  const unsigned from_a =
      or_of_lanes(_mm256_sllv_epi32(_mm256_set1_epi32(1), at)) & ((1u << kWidth) - 1);
  const unsigned from_b = ~from_a & ((1u << kWidth) - 1);
  const __m256i a_lanes = permutation(kExpand[from_a]);
  const __m256i b_lanes = permutation(kExpand[from_b]);
  const __m256i take_a = lanes_of(from_a);
  const std::size_t t = i + j;
  store(out_indices + t,
        _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(load(b.indices + j), b_lanes),
                           _mm256_permutevar8x32_epi32(a_indices, a_lanes), take_a));
  _mm256_storeu_ps(
      out_values + t,
      _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(b.values + j), b_lanes),
                       _mm256_permutevar8x32_ps(_mm256_loadu_ps(a.values + i), a_lanes),
                       _mm256_castsi256_ps(take_a)));
  if constexpr (Tagged) {
    store(out_tags + t,
          _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(load(b.tags + j), b_lanes),
                             _mm256_permutevar8x32_epi32(load(a.tags + i), a_lanes), take_a));
  }
  const auto taken = static_cast<std::size_t>(__builtin_popcount(from_a));
  run.i += taken;
  run.j += kWidth - taken;
}

template <bool Tagged>
COMMSGD_AVX2 void merge_two_runs(MergeSide a, MergeSide b, std::uint32_t* out_indices,
                                 float* out_values, std::uint32_t* out_tags) {
  auto [first, second] = two_runs(a, b);
  while (first.has_block(kWidth) && second.has_block(kWidth)) {
    merge_block<Tagged>(a, b, first, out_indices, out_values, out_tags);
    merge_block<Tagged>(a, b, second, out_indices, out_values, out_tags);
  }
  for (MergeRun* run : {&first, &second}) {
    while (run->has_block(kWidth)) {
      merge_block<Tagged>(a, b, *run, out_indices, out_values, out_tags);
    }
    merge_entries<Tagged>(a, b, *run, out_indices, out_values, out_tags);
  }
}

// The lanes of one block in `keep`, in order, to `to` at `at`, stored as 8 whole lanes.
template <bool Tagged>
COMMSGD_AVX2 inline void store_kept(unsigned keep, __m256i indices, __m256 values,
                                    MergedEntries from, std::size_t t, MergedEntries to,
                                    std::size_t at) {
  const __m256i lanes = permutation(kCompress[keep]);
  store(to.indices + at, _mm256_permutevar8x32_epi32(indices, lanes));
  _mm256_storeu_ps(to.values + at, _mm256_permutevar8x32_ps(values, lanes));
  if constexpr (Tagged) {
    store(to.tags + at, _mm256_permutevar8x32_epi32(load(from.tags + t), lanes));
  }
}

COMMSGD_AVX2 inline __m256i keys_of(__m256 values) {
  return _mm256_and_si256(_mm256_castps_si256(values), _mm256_set1_epi32(0x7fffffff));
}

template <bool Tagged>
COMMSGD_AVX2 std::size_t keep_blocks(MergedEntries from, std::size_t m, std::int32_t low,
                                     MergedEntries to, std::size_t t, std::size_t& kept) {
  const __m256i floor = _mm256_set1_epi32(low);
  // As merge_avx512.cpp's: kept <= t, so a block's 8 stored lanes stay inside `to`.
  for (; t + kWidth <= m; t += kWidth) {
    const __m256i indices = load(from.indices + t);
    const __m256i next = load(from.indices + t + 1);  // at most the sentinel
    if (mask_of(_mm256_cmpeq_epi32(indices, next)) != 0) break;
    const __m256 values = _mm256_loadu_ps(from.values + t);
    const unsigned keep = ~mask_of(_mm256_cmpgt_epi32(floor, keys_of(values))) & 0xffu;
    store_kept<Tagged>(keep, indices, values, from, t, to, kept);
    kept += static_cast<std::size_t>(__builtin_popcount(keep));
  }
  return t;
}

// The lanes not after the selection's cut: key above cut_key, or equal to it with index at most
// cut_index.
COMMSGD_AVX2 inline unsigned not_after_cut(__m256 values, __m256i indices, std::int32_t cut_key,
                                           std::uint32_t cut_index) {
  const __m256i keys = keys_of(values);
  const __m256i key = _mm256_set1_epi32(cut_key);
  const __m256i tied_before =
      _mm256_and_si256(_mm256_cmpeq_epi32(keys, key),
                       at_most_u32(indices, _mm256_set1_epi32(static_cast<int>(cut_index))));
  return mask_of(_mm256_or_si256(_mm256_cmpgt_epi32(keys, key), tied_before));
}

template <bool Tagged>
COMMSGD_AVX2 std::size_t write_blocks(MergedEntries from, std::size_t n, std::int32_t cut_key,
                                      std::uint32_t cut_index, MergedEntries to,
                                      std::size_t& written) {
  std::size_t w = written, t = 0;
  for (; t + kWidth <= n; t += kWidth) {
    const __m256i indices = load(from.indices + t);
    const __m256 values = _mm256_loadu_ps(from.values + t);
    const unsigned keep = not_after_cut(values, indices, cut_key, cut_index);
    store_kept<Tagged>(keep, indices, values, from, t, to, w);
    w += static_cast<std::size_t>(__builtin_popcount(keep));
  }
  written = w;
  return t;
}

COMMSGD_AVX2 std::size_t gather_bracket_blocks(const float* values, std::size_t n,
                                               std::int32_t high, std::uint64_t* bracket,
                                               std::size_t& gathered, std::size_t& above) {
  const __m256i ceiling = _mm256_set1_epi32(high);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  std::size_t t = 0;
  // Each half of a block packs 4 keys with their positions into 64 bits and stores the ones in
  // the bracket as a whole register: gathered <= t, so the lanes past them stay inside n.
  for (; t + kWidth <= n; t += kWidth) {
    const __m256i keys = keys_of(_mm256_loadu_ps(values + t));
    const unsigned outside = mask_of(_mm256_cmpgt_epi32(keys, ceiling));
    const unsigned inside = ~outside & 0xffu;
    const __m256i position = _mm256_sub_epi32(
        _mm256_set1_epi32(-1), _mm256_add_epi32(lane, _mm256_set1_epi32(static_cast<int>(t))));
    for (int half = 0; half < 2; ++half) {
      const __m128i key4 =
          half == 0 ? _mm256_castsi256_si128(keys) : _mm256_extracti128_si256(keys, 1);
      const __m128i position4 =
          half == 0 ? _mm256_castsi256_si128(position) : _mm256_extracti128_si256(position, 1);
      const __m256i packed = _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(key4), 32),
                                             _mm256_cvtepu32_epi64(position4));
      const unsigned in_half = (inside >> (4 * half)) & 0xfu;
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(bracket + gathered),
          _mm256_permutevar8x32_epi32(packed, permutation(kCompress[halves_of(in_half)])));
      gathered += static_cast<std::size_t>(__builtin_popcount(in_half));
    }
    above += static_cast<std::size_t>(__builtin_popcount(outside));
  }
  return t;
}

COMMSGD_AVX2 std::size_t order_blocks(const std::uint32_t* indices, std::size_t n,
                                      std::uint32_t& descents) {
  __m256i found = _mm256_setzero_si256();
  std::size_t i = 1;
  for (; i + kWidth <= n; i += kWidth) {
    found = _mm256_or_si256(found, at_most_u32(load(indices + i), load(indices + i - 1)));
  }
  descents |= static_cast<std::uint32_t>(mask_of(found) != 0);
  return i;
}

COMMSGD_AVX2 std::size_t mark_blocks(const float* values, const std::uint32_t* indices,
                                     std::size_t n, std::int32_t cut_key, std::uint32_t cut_index,
                                     std::uint8_t* marks) {
  std::size_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const unsigned kept =
        not_after_cut(_mm256_loadu_ps(values + i), load(indices + i), cut_key, cut_index);
    std::memcpy(marks + i, &kMarkBytes[kept], kWidth);  // little-endian: byte l is lane l
  }
  return i;
}

void merge_as_multisets(MergeSide a, MergeSide b, std::uint32_t* out_indices, float* out_values,
                        std::uint32_t* out_tags) {
  if (out_tags != nullptr) {
    merge_two_runs<true>(a, b, out_indices, out_values, out_tags);
  } else {
    merge_two_runs<false>(a, b, out_indices, out_values, out_tags);
  }
}

std::size_t keep(MergedEntries from, std::size_t m, std::int32_t low, MergedEntries to,
                 std::size_t t, std::size_t& kept) {
  return from.tags != nullptr ? keep_blocks<true>(from, m, low, to, t, kept)
                              : keep_blocks<false>(from, m, low, to, t, kept);
}

std::size_t write_kept(MergedEntries from, std::size_t n, std::int32_t cut_key,
                       std::uint32_t cut_index, MergedEntries to, std::size_t& written) {
  return from.tags != nullptr ? write_blocks<true>(from, n, cut_key, cut_index, to, written)
                              : write_blocks<false>(from, n, cut_key, cut_index, to, written);
}

}  // namespace

const MergeBlocks kAvx2MergeBlocks{
    kWidth, merge_as_multisets, order_blocks, keep, gather_bracket_blocks, write_kept, mark_blocks};

}  // namespace commsgd::kernels::detail
