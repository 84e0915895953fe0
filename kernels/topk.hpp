#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

// Exact top-k of |x| in the selection order of abs_order.hpp (ties: smaller index), sorted by
// index, values = x at those indices; 1 <= k <= x.size(), else std::invalid_argument.
//
// Without sorting x: a threshold from a strided sample (3σ below its estimate of the k-th),
// one bounded compaction pass above it (bounded_selection.hpp), a second pass from scratch only
// if the sample overshot (fewer than k passed), then a radix select among the candidates (k to
// ~2k). Scratch is reused: steady-state calls do not allocate.
class TopkSelector {
 public:
  void select(std::span<const float> x, std::size_t k, SparseSet& out);

 private:
  std::vector<float> sample_;
};

}  // namespace commsgd::kernels
