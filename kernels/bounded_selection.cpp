#include "kernels/bounded_selection.hpp"

#include <algorithm>

#include "kernels/block_scan.hpp"

namespace commsgd::kernels {

std::size_t bounded_cap(std::size_t d, std::size_t k) {
  return std::min(d, std::max(2 * k, k + 4096));
}

bool select_above_bounded(std::span<const float> x, AbsKey t, std::size_t k, std::size_t cap,
                          SparseSet& out) {
  // Before each append size <= cap, and an append adds at most a block.
  out.values.resize(cap + kScanBlock);
  out.indices.resize(cap + kScanBlock);
  float* values = out.values.data();
  std::uint32_t* indices = out.indices.data();
  const float* __restrict p = x.data();
  const std::size_t n = x.size();
  bool raised = false;
  std::size_t size = 0, i = 0;
  auto raise_if_full = [&] {
    if (size <= cap) return;
    t = keep_top_k(values, indices, size, k);
    size = k;
    raised = true;
  };
  for (; i + kScanBlock <= n; i += kScanBlock) {
    const std::uint32_t mask = block_pass_mask(p + i, t);
    if (mask == 0) continue;
    size = append_mask(p + i, mask, static_cast<std::uint32_t>(i), values, indices, size);
    raise_if_full();
  }
  size = append_greater(p + i, n - i, static_cast<std::uint32_t>(i), t, values, indices, size);
  raise_if_full();
  out.values.resize(size);
  out.indices.resize(size);
  return raised;
}

}  // namespace commsgd::kernels
