#include "kernels/sparse_ops.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/abs_order.hpp"
#include "kernels/merge_blocks.hpp"

namespace commsgd::kernels {
namespace {

void check_set(SparseView s, const char* who) {
  if (s.values.size() != s.indices.size()) {
    throw std::invalid_argument(std::string(who) + ": values and indices differ in size");
  }
}

// Whether the view reads what `s` stores: writing s would change the input under the merge.
bool reads_from(SparseView v, const SparseSet& s) {
  return (!v.indices.empty() && v.indices.data() == s.indices.data()) ||
         (!v.values.empty() && v.values.data() == s.values.data());
}

// Indices are sorted, so the last one bounds them all.
void check_fits(const SparseSet& s, std::size_t d, const char* who) {
  check_set(s, who);
  if (s.size() != 0 && s.indices.back() >= d) {
    throw std::invalid_argument(std::string(who) + ": index beyond the dense vector");
  }
}

// Whether a set's indices increase strictly: a pass on its own rather than a check in the merge,
// whose every step is on the critical path. Blocks of a fixed count, the shape GCC vectorizes at
// -O2 (block_scan.hpp): p[j] <= p[j - 1] for j in [0, 16).
constexpr std::size_t kOrderBlock = 16;
std::uint32_t descents_in_block(const std::uint32_t* __restrict p) {
  std::uint32_t descents = 0;
  for (std::size_t j = 0; j < kOrderBlock; ++j) {
    descents |= static_cast<std::uint32_t>(p[j] <= p[j - 1]);
  }
  return descents;
}
bool strictly_increasing(SparseView s) {
  const std::uint32_t* index = s.indices.data();
  const std::size_t n = s.size();
  std::uint32_t descents = 0;
  std::size_t i = 1;
  if (const detail::MergeBlocks* blocks = detail::merge_blocks()) {
    i = blocks->order(index, n, descents);
  }
  for (; i + kOrderBlock <= n; i += kOrderBlock) descents |= descents_in_block(index + i);
  for (; i < n; ++i) descents |= static_cast<std::uint32_t>(index[i] <= index[i - 1]);
  return descents == 0;
}

// The three arrays of a sparse set with tags, as the merge reads and writes them.
using Entries = detail::MergedEntries;

// Entries as the block passes take them: an untagged merge's tags are null.
template <bool Tagged>
Entries with_tags(Entries e) {
  if constexpr (!Tagged) e.tags = nullptr;
  return e;
}

// The first step of merge_keep_k: a and b merged by index as multisets, a's entry before b's on a
// shared index, into `to` (room for a.size() + b.size()); every entry of either lands at its own
// position, so a's i-th and b's j-th entry go to i + j.
//
// One merge is a chain of dependent steps (the next pair to compare depends on this comparison),
// so its speed is the latency of a step. The union is cut at three of a's indices into four runs
// that do not depend on each other, and their steps are interleaved, so that one run's loads and
// comparisons overlap the others'. A step has no branch, which random indices would mispredict
// half the time: index, value and tag are chosen with a mask. Written out for the four runs, each
// a pair of locals, because GCC at -O2 neither unrolls a loop over an array of runs (which would
// keep the positions in memory) nor keeps a chosen pointer or std::min free of branches.
template <bool Tagged>
void merge_as_multisets(SparseView a, const std::uint32_t* a_tags, SparseView b,
                        const std::uint32_t* b_tags, Entries to) {
  const std::uint32_t* __restrict ai = a.indices.data();
  const std::uint32_t* __restrict bi = b.indices.data();
  const float* __restrict av = a.values.data();
  const float* __restrict bv = b.values.data();
  std::uint32_t* __restrict oi = to.indices;
  float* __restrict ov = to.values;
  std::uint32_t* __restrict ot = to.tags;
  const auto choose = [](std::uint32_t mask, std::uint32_t if_set, std::uint32_t if_clear) {
    return (if_set & mask) | (if_clear & ~mask);
  };
  struct Run {
    std::size_t i, i_end, j, j_end;
    std::size_t steps_left() const { return std::min(i_end - i, j_end - j); }
  };
  const auto step = [&](Run& run) {
    const std::size_t i = run.i, j = run.j;
    const std::uint32_t x = ai[i], y = bi[j];
    const std::uint32_t from_a = 0u - static_cast<std::uint32_t>(x <= y);
    oi[i + j] = choose(from_a, x, y);
    ov[i + j] = std::bit_cast<float>(
        choose(from_a, std::bit_cast<std::uint32_t>(av[i]), std::bit_cast<std::uint32_t>(bv[j])));
    if constexpr (Tagged) ot[i + j] = choose(from_a, a_tags[i], b_tags[j]);
    run.i += from_a & 1u;
    run.j += (from_a & 1u) ^ 1u;
  };
  // What is left of a run once one side is used up follows in order.
  const auto finish = [&](Run& run) {
    while (run.steps_left() > 0) step(run);
    for (; run.i < run.i_end; ++run.i) {
      oi[run.i + run.j] = ai[run.i];
      ov[run.i + run.j] = av[run.i];
      if constexpr (Tagged) ot[run.i + run.j] = a_tags[run.i];
    }
    for (; run.j < run.j_end; ++run.j) {
      oi[run.i + run.j] = bi[run.j];
      ov[run.i + run.j] = bv[run.j];
      if constexpr (Tagged) ot[run.i + run.j] = b_tags[run.j];
    }
  };
  // Run r ends before a's entry at r + 1 quarters and b's first entry at or past its index.
  const std::size_t na = a.size(), nb = b.size();
  const auto cut = [&](std::size_t quarter) -> std::pair<std::size_t, std::size_t> {
    const std::size_t i = quarter * na / 4;
    if (i == na) return {na, nb};
    return {i, static_cast<std::size_t>(std::lower_bound(bi, bi + nb, ai[i]) - bi)};
  };
  const auto [i1, j1] = cut(1);
  const auto [i2, j2] = cut(2);
  const auto [i3, j3] = cut(3);
  Run r0{0, i1, 0, j1}, r1{i1, i2, j1, j2}, r2{i2, i3, j2, j3}, r3{i3, na, j3, nb};
  // Each step moves one of a run's two positions by one, so `steps` steps stay in bounds.
  const auto steps_all_can_take = [&] {
    return std::min(std::min(r0.steps_left(), r1.steps_left()),
                    std::min(r2.steps_left(), r3.steps_left()));
  };
  for (std::size_t steps = steps_all_can_take(); steps > 0; steps = steps_all_can_take()) {
    for (std::size_t s = 0; s < steps; ++s) {
      step(r0);
      step(r1);
      step(r2);
      step(r3);
    }
  }
  finish(r0);
  finish(r1);
  finish(r2);
  finish(r3);
}

// The second step: one pass over the m merged entries (from.indices[m] a sentinel unlike
// from.indices[m - 1]) that writes to `to`, in order, the union's entries with key >= low. A
// shared index (two neighbours, a's first) becomes one entry, a.value + b.value in that order so
// that both partners compute the same bits, with the AND of the two tags. Two random selections of
// k from d share about k²/d indices, so a shared index takes a branch that is almost never taken,
// and the common entry is written without one. Returns the union's size and how many were kept;
// the shared indices go to `shared`.
template <bool Tagged>
std::pair<std::size_t, std::size_t> keep_at_least(Entries from, std::size_t m, AbsKey low,
                                                  Entries to, std::vector<std::uint32_t>& shared) {
  const detail::MergeBlocks* blocks = detail::merge_blocks();
  std::size_t kept = 0;
  shared.clear();
  for (std::size_t t = 0; t < m;) {
    if (blocks) {
      t = blocks->keep(with_tags<Tagged>(from), m, low, with_tags<Tagged>(to), t, kept);
    }
    // One entry at a time: everything on the portable path, else the block where the blocks
    // stopped (one with a shared index, or the last few). (The restrict pointers live in this block
    // only: the blocks above write the same arrays.)
    const std::uint32_t* __restrict fi = from.indices;
    const float* __restrict fv = from.values;
    const std::uint32_t* __restrict ft = from.tags;
    std::uint32_t* __restrict ti = to.indices;
    float* __restrict tv = to.values;
    std::uint32_t* __restrict tt = to.tags;
    for (const std::size_t end = blocks ? std::min(m, t + blocks->width) : m; t < end; ++t) {
      float value = fv[t];
      std::uint32_t tag = Tagged ? ft[t] : 0;
      if (fi[t] == fi[t + 1]) [[unlikely]] {
        shared.push_back(fi[t]);
        ++t;
        value += fv[t];
        if constexpr (Tagged) tag &= ft[t];
      }
      ti[kept] = fi[t];
      tv[kept] = value;
      if constexpr (Tagged) tt[kept] = tag;
      kept += static_cast<std::size_t>(abs_key(value) >= low);
    }
  }
  return {m - shared.size(), kept};
}

// The keys in [low, high] of n kept entries (all at least low), each packed with its position so
// that one descending integer order is the selection order (larger key, then smaller position,
// which is smaller index), written to `bracket` without a branch; returns how many, and counts
// those above high.
std::size_t gather_bracket(const float* __restrict values, std::size_t n, AbsKey high,
                           std::uint64_t* __restrict bracket, std::size_t& above) {
  std::size_t gathered = 0, over = 0, t = 0;
  if (const detail::MergeBlocks* blocks = detail::merge_blocks()) {
    t = blocks->gather_bracket(values, n, high, bracket, gathered, over);
  }
  for (; t < n; ++t) {
    const AbsKey key = abs_key(values[t]);
    bracket[gathered] = (static_cast<std::uint64_t>(key) << 32) | (0xffffffffu - t);
    const std::size_t is_over = static_cast<std::size_t>(key > high);
    gathered += is_over ^ 1;
    over += is_over;
  }
  above = over;
  return gathered;
}

// Up to this many entries, the union's k-th key is found among all of them by one partial sort:
// a bracket's sample (two partial sorts of up to 1024 keys) and histogram (2048 bins) have a
// fixed cost that a small union (gTop-k's at ρ = 0.001 of a small model) does not repay; the two
// ways cost the same at about 1500 entries (docs/design.md, "Aggregations": the merge).
constexpr std::size_t kSmallUnion = 1024;

// A bracket [low, high] around the k-th key of the m merged entries, from a strided sample of
// 1024 of their keys (a shared index's two parts stand in for its sum: the pass that follows
// counts exactly, and a missed bracket costs a second pass, not a wrong answer). With 1024 keys
// the k-th lies within ±48 (3 standard deviations at most) of its sample rank all but a few times
// in a thousand, and about a tenth of the union falls in the bracket.
std::pair<AbsKey, AbsKey> bracket_by_sample(const float* values, std::size_t m, std::size_t k,
                                            std::vector<AbsKey>& sample) {
  constexpr std::size_t kSample = 1024, kMargin = 48;
  const std::size_t n = std::min(m, kSample);
  sample.resize(n);
  for (std::size_t j = 0; j < n; ++j) sample[j] = abs_key(values[j * m / n]);
  // The sample's rank of the k-th, 1-based in descending key order, and the bracket around it.
  const std::size_t rank = std::min(n, (k * n + m - 1) / m);
  const std::size_t high_rank = rank > kMargin ? rank - kMargin : 1;
  const std::size_t low_rank = std::min(n, rank + kMargin);
  const auto descending = std::greater<>();
  std::nth_element(sample.begin(), sample.begin() + (low_rank - 1), sample.end(), descending);
  const AbsKey low = sample[low_rank - 1];
  std::nth_element(sample.begin(), sample.begin() + (high_rank - 1),
                   sample.begin() + (low_rank - 1), descending);
  return {low, std::max(low, sample[high_rank - 1])};
}

// Where the selection ends: its last entry's key and index. A union entry is kept if it is not
// after that one in the selection order (larger key, then smaller index). Keys are never negative,
// so a key of -1 keeps everything.
struct Cut {
  AbsKey key;
  std::uint32_t index;
};

inline std::uint8_t not_after(Cut cut, float value, std::uint32_t index) {
  const AbsKey key = abs_key(value);
  return static_cast<std::uint8_t>((key > cut.key) | ((key == cut.key) & (index <= cut.index)));
}

// The last step: the n kept entries not after the cut, in order, to `to` (room for n + 16). Every
// entry is written at the next free place, kept or not: no branch.
template <bool Tagged>
void write_kept(Entries from, Cut cut, std::size_t n, Entries to) {
  std::size_t w = 0, t = 0;
  if (const detail::MergeBlocks* blocks = detail::merge_blocks()) {
    t = blocks->write_kept(with_tags<Tagged>(from), n, cut.key, cut.index, with_tags<Tagged>(to),
                           w);
  }
  const std::uint32_t* __restrict ki = from.indices;
  const float* __restrict kv = from.values;
  const std::uint32_t* __restrict kt = from.tags;
  std::uint32_t* __restrict oi = to.indices;
  float* __restrict ov = to.values;
  std::uint32_t* __restrict ot = to.tags;
  for (; t < n; ++t) {
    oi[w] = ki[t];
    ov[w] = kv[t];
    if constexpr (Tagged) ot[w] = kt[t];
    w += not_after(cut, kv[t], ki[t]);
  }
}

// The r-th largest (1-based, r <= n) of n packed bracket entries, keys in [low, high] above their
// positions (gather_bracket). A histogram of the keys' offsets from low, at most 2048 bins, finds
// the bin that holds it in one pass; only that bin's entries are then partially sorted. A
// partial sort of the whole bracket, about a tenth of the union, cost as much as the merge's
// keep pass.
std::uint64_t rth_largest(std::uint64_t* bracket, std::size_t n, std::size_t r, AbsKey low,
                          AbsKey high, std::vector<std::uint32_t>& histogram) {
  if (n <= kSmallUnion) {  // a partial sort of all of them costs less than the histogram
    std::nth_element(bracket, bracket + (r - 1), bracket + n, std::greater<>());
    return bracket[r - 1];
  }
  constexpr int kBinBits = 11;
  const auto span = static_cast<std::uint32_t>(high - low);
  const int shift = std::max(0, static_cast<int>(std::bit_width(span)) - kBinBits);
  const auto bin_of = [&](std::uint64_t entry) {
    return (static_cast<std::uint32_t>(entry >> 32) - static_cast<std::uint32_t>(low)) >> shift;
  };
  histogram.assign((span >> shift) + 1, 0);
  for (std::size_t j = 0; j < n; ++j) ++histogram[bin_of(bracket[j])];
  std::size_t bin = histogram.size() - 1, above = 0;
  while (above + histogram[bin] < r) above += histogram[bin--];
  // The bin's entries to the front, then the (r - above)-th largest among them.
  std::size_t in_bin = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (bin_of(bracket[j]) == bin) std::swap(bracket[in_bin++], bracket[j]);
  }
  const auto nth = static_cast<std::ptrdiff_t>(r - above - 1);
  std::nth_element(bracket, bracket + nth, bracket + in_bin, std::greater<>());
  return bracket[nth];
}

// The scratch one thread's merges share, kept between calls so that a gTop-k round allocates
// nothing once it has run.
struct MergeScratch {
  std::vector<std::uint32_t> indices, tags, kept_indices, kept_tags;
  std::vector<float> values, kept_values;
  std::vector<AbsKey> sample;
  std::vector<std::uint64_t> bracket;
  std::vector<std::uint32_t> histogram;
  std::vector<std::uint32_t> shared;
};

// marks[i]: whether the i-th entry of `side`, one of the merge's inputs, has its index in `out`.
// An entry whose index only one input holds is in the union as it is, so its own key and index
// against the cut decide; a shared index's sum decided, and out is searched for it.
void mark_kept(SparseView side, Cut cut, const std::vector<std::uint32_t>& shared,
               const SparseSet& out, std::vector<std::uint8_t>& marks) {
  const std::size_t n = side.size();
  marks.resize(n);
  const float* values = side.values.data();
  const std::uint32_t* indices = side.indices.data();
  std::size_t i = 0;
  if (const detail::MergeBlocks* blocks = detail::merge_blocks()) {
    i = blocks->mark(values, indices, n, cut.key, cut.index, marks.data());
  }
  for (; i < n; ++i) marks[i] = not_after(cut, values[i], indices[i]);
  for (const std::uint32_t index : shared) {
    const auto at = std::lower_bound(side.indices.begin(), side.indices.end(), index);
    marks[static_cast<std::size_t>(at - side.indices.begin())] =
        std::binary_search(out.indices.begin(), out.indices.end(), index) ? 1 : 0;
  }
}

// `marked`, with `marks`, is the input whose entries are marked (mark_kept), or empty with null.
template <bool Tagged>
void merge_keep_k_impl(SparseView a, const std::uint32_t* a_tags, SparseView b,
                       const std::uint32_t* b_tags, std::size_t k, SparseSet& out,
                       std::vector<std::uint32_t>* out_tags, SparseView marked,
                       std::vector<std::uint8_t>* marks) {
  check_set(a, "merge_keep_k");
  check_set(b, "merge_keep_k");
  if (reads_from(a, out) || reads_from(b, out)) {
    throw std::invalid_argument("merge_keep_k: out aliases an input");
  }
  if (k < 1) throw std::invalid_argument("merge_keep_k: k < 1");
  if (!strictly_increasing(a) || !strictly_increasing(b)) {
    throw std::invalid_argument("merge_keep_k: input not sorted by strictly increasing index");
  }
  thread_local MergeScratch scratch;
  MergeScratch& s = scratch;
  const std::size_t m = a.size() + b.size();
  s.indices.resize(m + 1);
  s.values.resize(m + 1);
  s.kept_indices.resize(m);
  s.kept_values.resize(m);
  if constexpr (Tagged) {
    s.tags.resize(m + 1);
    s.kept_tags.resize(m);
  }
  const Entries merged{s.indices.data(), s.values.data(), s.tags.data()};
  const Entries kept{s.kept_indices.data(), s.kept_values.data(), s.kept_tags.data()};
  if (const detail::MergeBlocks* blocks = detail::merge_blocks()) {
    blocks->merge_as_multisets({a.indices.data(), a.values.data(), a_tags, a.size()},
                               {b.indices.data(), b.values.data(), b_tags, b.size()},
                               merged.indices, merged.values, Tagged ? merged.tags : nullptr);
  } else {
    merge_as_multisets<Tagged>(a, a_tags, b, b_tags, merged);
  }
  if (m > 0) s.indices[m] = ~s.indices[m - 1];  // the sentinel: shares no index

  // Only what can be among the first k is kept: the entries at or above the bracket's low end,
  // or, when the union may have at most k entries, is small or the sample missed, all of them.
  constexpr AbsKey kEverything = 0, kTop = std::numeric_limits<AbsKey>::max();
  auto [low, high] = m <= k || m <= kSmallUnion
                         ? std::pair{kEverything, kTop}
                         : bracket_by_sample(s.values.data(), m, k, s.sample);
  auto [union_size, n] = keep_at_least<Tagged>(merged, m, low, kept, s.shared);
  s.bracket.resize(n);
  std::size_t above = 0;
  std::size_t bracketed = gather_bracket(s.kept_values.data(), n, high, s.bracket.data(), above);
  const bool complete = union_size <= k ? n == union_size : n >= k && above < k;
  if (!complete) {
    low = kEverything;
    high = kTop;
    std::tie(union_size, n) = keep_at_least<Tagged>(merged, m, low, kept, s.shared);
    s.bracket.resize(n);
    bracketed = gather_bracket(s.kept_values.data(), n, high, s.bracket.data(), above);
  }

  // The bracket's first k - above in the selection order are kept, and the last of them is the
  // cut: exactly k entries are not after it, since the kept entries' indices are unique.
  Cut cut{-1, 0};
  if (union_size > k) {
    const std::uint64_t last_kept =
        rth_largest(s.bracket.data(), bracketed, k - above, low, high, s.histogram);
    cut = {static_cast<AbsKey>(last_kept >> 32),
           s.kept_indices[0xffffffffu - static_cast<std::uint32_t>(last_kept)]};
  }
  const std::size_t size = std::min(union_size, k);
  // Room for what write_kept writes past the last entry kept: one entry, or a block of 16.
  out.values.resize(n + 16);
  out.indices.resize(n + 16);
  if constexpr (Tagged) out_tags->resize(n + 16);
  write_kept<Tagged>(kept, cut, n,
                     {out.indices.data(), out.values.data(), Tagged ? out_tags->data() : nullptr});
  out.values.resize(size);
  out.indices.resize(size);
  if constexpr (Tagged) out_tags->resize(size);
  if (marks != nullptr) mark_kept(marked, cut, s.shared, out, *marks);
}

// A fixed trip count with restrict parameters: the shape GCC vectorizes at -O2 (block_scan.hpp).
constexpr std::size_t kAddBlock = 16;
void add_block(float* __restrict acc, const float* __restrict g) {
  for (std::size_t j = 0; j < kAddBlock; ++j) acc[j] += g[j];
}

}  // namespace

void merge_keep_k(SparseView a, SparseView b, std::size_t k, SparseSet& out) {
  merge_keep_k_impl<false>(a, nullptr, b, nullptr, k, out, nullptr, SparseView{{}, {}}, nullptr);
}

void merge_keep_k(SparseView a, SparseView b, std::size_t k, SparseSet& out, MergeInput marked,
                  std::vector<std::uint8_t>& marks) {
  merge_keep_k_impl<false>(a, nullptr, b, nullptr, k, out, nullptr, marked == MergeInput::a ? a : b,
                           &marks);
}

void merge_keep_k(SparseView a, std::span<const std::uint32_t> a_tags, SparseView b,
                  std::span<const std::uint32_t> b_tags, std::size_t k, SparseSet& out,
                  std::vector<std::uint32_t>& out_tags) {
  if (a_tags.size() != a.size() || b_tags.size() != b.size()) {
    throw std::invalid_argument("merge_keep_k: a tag for every entry");
  }
  merge_keep_k_impl<true>(a, a_tags.data(), b, b_tags.data(), k, out, &out_tags, SparseView{{}, {}},
                          nullptr);
}

void scatter_add(const SparseSet& s, std::span<float> dense) {
  check_fits(s, dense.size(), "scatter_add");
  float* d = dense.data();
  for (std::size_t i = 0; i < s.size(); ++i) d[s.indices[i]] += s.values[i];
}

void add(std::span<float> acc, std::span<const float> g) {
  if (acc.size() != g.size()) throw std::invalid_argument("add: sizes differ");
  float* a = acc.data();
  const float* b = g.data();
  const std::size_t n = acc.size();
  std::size_t i = 0;
  for (; i + kAddBlock <= n; i += kAddBlock) add_block(a + i, b + i);
  for (; i < n; ++i) a[i] += b[i];
}

void zero_applied(std::span<float> dense, const SparseSet& s,
                  std::span<const std::uint8_t> applied) {
  check_fits(s, dense.size(), "zero_applied");
  if (applied.size() != s.size()) throw std::invalid_argument("zero_applied: mask size differs");
  float* d = dense.data();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (applied[i] != 0) d[s.indices[i]] = 0.0f;
  }
}

}  // namespace commsgd::kernels
