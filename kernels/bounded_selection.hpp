#pragma once

#include <cstddef>
#include <span>

#include "kernels/abs_order.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

// One compaction pass of the entries with key > t into out, in index order, that never holds
// much more than cap (k < cap) of them: when more pile up, it keeps the first k in the selection
// order and raises t to the k-th's key. That is exact for the top-k: every later entry has a
// larger index than the k kept, so it can only beat them with a larger key. A threshold that is
// far too low (bad sample, adversarial layout) thus costs a few raises, not memory.
//
// Returns whether t was raised. If it was, out has at least k entries and contains x's top-k;
// if not, out is exactly the entries with key > t.
bool select_above_bounded(std::span<const float> x, AbsKey t, std::size_t k, std::size_t cap,
                          SparseSet& out);

// The cap callers use: room for twice the wanted entries (above DGC's 4k/3), a raise every
// k entries at least, and never more than x holds.
std::size_t bounded_cap(std::size_t d, std::size_t k);

}  // namespace commsgd::kernels
