#include "kernels/sparse_ops.hpp"

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
  std::size_t i = 0, j = 0, n = 0;
  // The output keeps each input's order, so it is strictly increasing iff both inputs are.
  std::int64_t last = -1;
  auto emit = [&](std::uint32_t index, float value) {
    if (static_cast<std::int64_t>(index) <= last) {
      throw std::invalid_argument("merge_keep_k: input not sorted by strictly increasing index");
    }
    last = index;
    out.indices[n] = index;
    out.values[n] = value;
    ++n;
  };
  while (i < a.size() && j < b.size()) {
    if (a.indices[i] < b.indices[j]) {
      emit(a.indices[i], a.values[i]);
      ++i;
    } else if (b.indices[j] < a.indices[i]) {
      emit(b.indices[j], b.values[j]);
      ++j;
    } else {
      emit(a.indices[i], a.values[i] + b.values[j]);
      ++i;
      ++j;
    }
  }
  for (; i < a.size(); ++i) emit(a.indices[i], a.values[i]);
  for (; j < b.size(); ++j) emit(b.indices[j], b.values[j]);
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
