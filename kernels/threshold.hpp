#pragma once

#include <cstddef>
#include <span>

#include "kernels/moments.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

// "|x| > threshold" throughout, with NaN entries counted as greater than any threshold (see
// abs_order.hpp); a NaN threshold throws std::invalid_argument.

// A threshold computed in double as the selectors compare it, in float; a non-finite one, or one
// beyond float's range (from NaN or infinite entries), becomes the largest float, so that what
// passes is the non-finite entries: surfaced, not hidden.
float threshold_as_float(double threshold);

// How many entries pass: one vectorized pass, the floor any selector's time is measured against.
std::size_t count_abs_greater(std::span<const float> x, float threshold);

// The entries that pass, sorted by index (compaction; out grows as needed, never shrinks its
// capacity, so steady-state calls do not allocate).
void select_abs_greater(std::span<const float> x, float threshold, SparseSet& out);

struct GaussianSelection {
  float threshold = 0;  // the one that was applied
  int refinements = 0;  // 0..3
};

// Gaussian-k (docs/design.md, "Sparse family"). μ, σ = mean_std(x); thr = float(|μ| + σ·Φ⁻¹(1 −
// ρ/2)); count the entries |x| > thr; while fewer than 3 refinements were made: if 3·count < 2k,
// thr ×= 0.5f, else if 3·count > 4k, thr ×= 1.5f, else stop; recount after each. Selects what
// passes the last thr (the count varies). Threshold arithmetic is in float, as written. A
// non-finite starting threshold (NaN or infinite entries) is replaced by the largest float, so what
// is selected is the non-finite entries: surfaced, not hidden.
//
// Cost: the moments pass and one compaction pass; a rising threshold refines within what was
// compacted, only a falling one passes over x again. k in [1, x.size()], ρ in (0, 1].
class GaussianSelector {
 public:
  GaussianSelection select(std::span<const float> x, std::size_t k, double density, SparseSet& out);
};

}  // namespace commsgd::kernels
