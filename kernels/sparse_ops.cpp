#include "kernels/sparse_ops.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/abs_order.hpp"

namespace commsgd::kernels {
namespace {

void check_set(const SparseSet& s, const char* who) {
  if (s.values.size() != s.indices.size()) {
    throw std::invalid_argument(std::string(who) + ": values and indices differ in size");
  }
}

// Indices are sorted, so the last one bounds them all.
void check_fits(const SparseSet& s, std::size_t d, const char* who) {
  check_set(s, who);
  if (s.size() != 0 && s.indices.back() >= d) {
    throw std::invalid_argument(std::string(who) + ": index beyond the dense vector");
  }
}

// Whether a set's indices increase strictly: a pass on its own, which vectorizes, rather than a
// check in the merge, whose every step is on the critical path.
bool strictly_increasing(const SparseSet& s) {
  const std::uint32_t* __restrict index = s.indices.data();
  std::size_t descents = 0;
  for (std::size_t i = 1; i < s.size(); ++i) descents += index[i] <= index[i - 1];
  return descents == 0;
}

// merge_keep_k's union of two sets sorted by strictly increasing index, written to oi and ov
// (room for a.size() + b.size() each); returns its size.
//
// A merge is one chain of dependent steps, so its speed is the latency of a step. Two things
// shorten it: which input goes next is chosen with masks, not with a branch that random indices
// would mispredict half the time; and each input's next index is loaded before the comparison
// that decides whether it is needed, so no load waits for that comparison.
std::size_t merge_union(const SparseSet& a, const SparseSet& b, std::uint32_t* __restrict oi,
                        float* __restrict ov) {
  const std::size_t na = a.size(), nb = b.size();
  const std::uint32_t* __restrict ai = a.indices.data();
  const std::uint32_t* __restrict bi = b.indices.data();
  const float* __restrict av = a.values.data();
  const float* __restrict bv = b.values.data();
  std::size_t i = 0, j = 0, n = 0;
  const auto emit = [&](std::uint32_t index, std::uint32_t value_bits) {
    oi[n] = index;
    ov[n] = std::bit_cast<float>(value_bits);
    ++n;
  };
  // One entry of the union from heads x = a[i] and y = b[j]: a's, b's, or on a shared index
  // a.value + b.value (a first, so that both partners compute the same bits).
  const auto take = [&](std::uint32_t x, std::uint32_t y, bool from_a, bool from_b) {
    const std::uint32_t mask_a = 0u - static_cast<std::uint32_t>(from_a);
    const std::uint32_t mask_b = 0u - static_cast<std::uint32_t>(from_b);
    const auto va = std::bit_cast<std::uint32_t>(av[i]);
    const auto vb = std::bit_cast<std::uint32_t>(bv[j]);
    const auto sum = std::bit_cast<std::uint32_t>(av[i] + bv[j]);
    emit((x & mask_a) | (y & ~mask_a),
         (sum & mask_a & mask_b) | (va & mask_a & ~mask_b) | (vb & mask_b & ~mask_a));
    i += from_a;
    j += from_b;
  };
  if (na > 0 && nb > 0) {
    std::uint32_t x = ai[0], y = bi[0];
    while (i + 1 < na && j + 1 < nb) {
      const std::uint32_t x_next = ai[i + 1], y_next = bi[j + 1];
      const bool from_a = x <= y, from_b = y <= x;
      take(x, y, from_a, from_b);
      x = from_a ? x_next : x;
      y = from_b ? y_next : y;
    }
    while (i < na && j < nb) take(ai[i], bi[j], ai[i] <= bi[j], bi[j] <= ai[i]);
  }
  for (; i < na; ++i) emit(ai[i], std::bit_cast<std::uint32_t>(av[i]));
  for (; j < nb; ++j) emit(bi[j], std::bit_cast<std::uint32_t>(bv[j]));
  return n;
}

// Where the k-th of n values stands in the selection order (rank_key's answer), from a sample:
// the k-th key is bracketed by two keys of a strided sample, one pass counts the keys above the
// bracket and gathers those inside it, and the bracket alone is ordered. One pass over 4-byte
// keys and a partial sort of about a tenth of them, against rank_key's three histogram passes
// over the values. When the bracket misses (a skewed sample), falls back to rank_key. n > k.
RankedKey rank_key_by_sample(const float* values, std::size_t n, std::size_t k,
                             std::vector<AbsKey>& sample, std::vector<std::uint64_t>& inside) {
  // With 1024 sample keys, the k-th lies within ±48 (3 standard deviations at most) of its
  // sample rank all but a few times in a thousand, and about a tenth of the keys in the bracket.
  constexpr std::size_t kSample = 1024, kMargin = 48;
  const std::size_t m = std::min(n, kSample);
  sample.resize(m);
  for (std::size_t j = 0; j < m; ++j) sample[j] = abs_key(values[j * n / m]);
  // The sample's rank of the k-th, 1-based in descending key order, and the bracket around it.
  const std::size_t rank = (k * m + n - 1) / n;
  const std::size_t high_rank = rank > kMargin ? rank - kMargin : 1;
  const std::size_t low_rank = std::min(m, rank + kMargin);
  const auto descending = std::greater<>();
  std::nth_element(sample.begin(), sample.begin() + (low_rank - 1), sample.end(), descending);
  const AbsKey low = sample[low_rank - 1];
  std::nth_element(sample.begin(), sample.begin() + (high_rank - 1),
                   sample.begin() + (low_rank - 1), descending);
  const AbsKey high = std::max(low, sample[high_rank - 1]);

  // Keys above the bracket are counted, those in [low, high] gathered without a branch, each
  // with its position, packed so that one descending integer order is the selection order:
  // larger key, then smaller position.
  inside.resize(n);
  std::size_t above = 0, gathered = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const AbsKey key = abs_key(values[i]);
    above += static_cast<std::size_t>(key > high);
    inside[gathered] = (static_cast<std::uint64_t>(key) << 32) | (0xffffffffu - i);
    gathered += static_cast<std::size_t>(key >= low) & static_cast<std::size_t>(key <= high);
  }
  if (above >= k || above + gathered < k) return rank_key({values, n}, k);  // missed

  const std::size_t r = k - above;  // the k-th is the bracket's r-th
  std::nth_element(inside.begin(), inside.begin() + (r - 1), inside.begin() + gathered, descending);
  const auto cut = static_cast<AbsKey>(inside[r - 1] >> 32);
  std::size_t greater = 0;
  for (std::size_t j = 0; j < gathered; ++j) {
    greater += static_cast<std::size_t>(static_cast<AbsKey>(inside[j] >> 32) > cut);
  }
  return {cut, r - greater};
}

// A fixed trip count with restrict parameters: the shape GCC vectorizes at -O2 (block_scan.hpp).
constexpr std::size_t kAddBlock = 16;
void add_block(float* __restrict acc, const float* __restrict g) {
  for (std::size_t j = 0; j < kAddBlock; ++j) acc[j] += g[j];
}

}  // namespace

void merge_keep_k(const SparseSet& a, const SparseSet& b, std::size_t k, SparseSet& out) {
  check_set(a, "merge_keep_k");
  check_set(b, "merge_keep_k");
  if (&out == &a || &out == &b) throw std::invalid_argument("merge_keep_k: out aliases an input");
  if (k < 1) throw std::invalid_argument("merge_keep_k: k < 1");
  // The union goes to scratch kept by each thread between calls, so a gTop-k round allocates
  // nothing once it has run, and out is written once, with what is kept.
  thread_local std::vector<std::uint32_t> indices;
  thread_local std::vector<float> values;
  thread_local std::vector<AbsKey> sample;
  thread_local std::vector<std::uint64_t> inside;
  if (!strictly_increasing(a) || !strictly_increasing(b)) {
    throw std::invalid_argument("merge_keep_k: input not sorted by strictly increasing index");
  }
  const std::size_t most = a.size() + b.size();
  indices.resize(most);
  values.resize(most);
  const std::size_t n = merge_union(a, b, indices.data(), values.data());
  const std::size_t kept = std::min(n, k);
  out.values.resize(kept);
  out.indices.resize(kept);
  if (n > k) {
    const RankedKey cut = rank_key_by_sample(values.data(), n, k, sample, inside);
    keep_in_order(values.data(), indices.data(), n, cut, k, out.values.data(), out.indices.data());
  } else {
    std::copy_n(values.begin(), n, out.values.begin());
    std::copy_n(indices.begin(), n, out.indices.begin());
  }
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
