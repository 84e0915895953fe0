#include "kernels/sparse_ops.hpp"

#include <bit>
#include <stdexcept>
#include <string>

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

// merge_keep_k's union, written to out's storage (room for a.size() + b.size()); returns its
// size, or throws if an input is not sorted by strictly increasing index.
//
// A merge is one chain of dependent steps, so its speed is the latency of a step. Two things
// shorten it: which input goes next is chosen with masks, not with a branch that random indices
// would mispredict half the time; and each input's next index is loaded before the comparison
// that decides whether it is needed, so no load waits for that comparison. The output keeps each
// input's order, so it is strictly increasing iff both inputs are: checked on the way.
std::size_t merge_union(const SparseSet& a, const SparseSet& b, SparseSet& out) {
  const std::size_t na = a.size(), nb = b.size();
  const std::uint32_t* __restrict ai = a.indices.data();
  const std::uint32_t* __restrict bi = b.indices.data();
  const float* __restrict av = a.values.data();
  const float* __restrict bv = b.values.data();
  std::uint32_t* __restrict oi = out.indices.data();
  float* __restrict ov = out.values.data();
  std::size_t i = 0, j = 0, n = 0;
  std::int64_t last = -1;
  bool sorted = true;
  const auto emit = [&](std::uint32_t index, std::uint32_t value_bits) {
    sorted &= static_cast<std::int64_t>(index) > last;
    last = index;
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
  if (!sorted) {
    throw std::invalid_argument("merge_keep_k: input not sorted by strictly increasing index");
  }
  return n;
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
  out.values.resize(a.size() + b.size());
  out.indices.resize(a.size() + b.size());
  const std::size_t n = merge_union(a, b, out);
  out.values.resize(n);
  out.indices.resize(n);
  keep_top_k(out, k);
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
