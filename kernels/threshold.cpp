#include "kernels/threshold.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/abs_order.hpp"
#include "kernels/block_scan.hpp"

namespace commsgd::kernels {
namespace {

// Long blocks: the per-block horizontal sum is what costs when x sits in cache.
constexpr std::size_t kCountBlock = 256;

// A fixed trip count and int lanes (a block cannot overflow them): vectorizes at -O2.
std::size_t block_count_greater(const float* __restrict p, AbsKey t) {
  int count = 0;
  for (std::size_t j = 0; j < kCountBlock; ++j) count += abs_key(p[j]) > t;
  return static_cast<std::size_t>(count);
}

// Room for `need` entries; grows geometrically and never gives capacity back.
void make_room(SparseSet& s, std::size_t need) {
  if (need <= s.values.size()) return;
  const std::size_t n = std::max(need, 2 * s.values.size());
  s.values.resize(n);
  s.indices.resize(n);
}

// Drops, in place, the entries that do not pass t (a subset of a compaction at a lower t).
void keep_greater(SparseSet& s, AbsKey t) {
  float* values = s.values.data();
  std::uint32_t* indices = s.indices.data();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    values[kept] = values[i];
    indices[kept] = indices[i];
    kept += abs_key(values[i]) > t;
  }
  s.values.resize(kept);
  s.indices.resize(kept);
}

float starting_threshold(std::span<const float> x, double density) {
  const Moments m = mean_std(x);
  return threshold_as_float(std::abs(m.mean) + m.stddev * normal_quantile(1.0 - density / 2.0));
}

}  // namespace

float threshold_as_float(double threshold) {
  constexpr double largest = std::numeric_limits<float>::max();
  return std::isfinite(threshold) && std::abs(threshold) <= largest ? static_cast<float>(threshold)
                                                                    : static_cast<float>(largest);
}

std::size_t count_abs_greater(std::span<const float> x, float threshold) {
  const AbsKey t = key_threshold(threshold);
  const float* __restrict p = x.data();
  const std::size_t n = x.size();
  std::size_t count = 0, i = 0;
  for (; i + kCountBlock <= n; i += kCountBlock) count += block_count_greater(p + i, t);
  for (; i < n; ++i) count += abs_key(p[i]) > t;
  return count;
}

void select_abs_greater(std::span<const float> x, float threshold, SparseSet& out) {
  check_indexable(x, "select_abs_greater");
  const AbsKey t = key_threshold(threshold);
  const float* __restrict p = x.data();
  const std::size_t n = x.size();
  std::size_t size = 0, i = 0;
  for (; i + kScanBlock <= n; i += kScanBlock) {
    const std::uint32_t mask = block_pass_mask(p + i, t);
    if (mask == 0) continue;
    make_room(out, size + kScanBlock);
    size = append_mask(p + i, mask, static_cast<std::uint32_t>(i), out.values.data(),
                       out.indices.data(), size);
  }
  make_room(out, size + (n - i));
  size = append_greater(p + i, n - i, static_cast<std::uint32_t>(i), t, out.values.data(),
                        out.indices.data(), size);
  out.values.resize(size);
  out.indices.resize(size);
}

GaussianSelection GaussianSelector::select(std::span<const float> x, std::size_t k, double density,
                                           SparseSet& out) {
  if (k < 1 || k > x.size()) throw std::invalid_argument("gaussian select: k outside [1, d]");
  if (!(density > 0.0 && density <= 1.0)) {
    throw std::invalid_argument("gaussian select: density outside (0, 1]");
  }
  GaussianSelection result{starting_threshold(x, density), 0};
  select_abs_greater(x, result.threshold, out);
  float compacted = result.threshold;  // out holds exactly the entries above this
  std::size_t count = out.size();
  while (result.refinements < 3) {
    if (3 * count < 2 * k) {
      result.threshold *= 0.5f;
    } else if (3 * count > 4 * k) {
      result.threshold *= 1.5f;
    } else {
      break;
    }
    ++result.refinements;
    if (result.threshold < compacted) {
      select_abs_greater(x, result.threshold, out);
      compacted = result.threshold;
      count = out.size();
    } else {
      count = count_abs_greater(out.values, result.threshold);
    }
  }
  if (count < out.size()) keep_greater(out, key_threshold(result.threshold));
  return result;
}

}  // namespace commsgd::kernels
