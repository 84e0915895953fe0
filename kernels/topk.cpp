#include "kernels/topk.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/abs_order.hpp"
#include "kernels/bounded_selection.hpp"

namespace commsgd::kernels {
namespace {

// A key threshold below the k-th largest key with high probability; -1 when the sample could
// not tell (it would need more ranks than it has).
//
// The sample size trades sampled reads against surplus candidates. With λ = k·m/d sampled
// entries expected above the true k-th and the rank taken 3√λ + 2 higher, about 3k/√λ extra
// entries pass; each costs a mispredicted block append, priced here at ten strided sample reads
// (a ratio of two timings on one machine; results/notes-from-code.md). Minimizing m + 10·3k/√λ
// gives λ = (15·k·ρ)^(2/3). Strides stay >= 64 floats so the sample touches at most a quarter of
// the cache lines; at least 4096 entries keep λ meaningful.
AbsKey sample_threshold(std::span<const float> x, std::size_t k, std::vector<float>& sample) {
  constexpr std::size_t kMinSample = 4096;
  const auto d = static_cast<double>(x.size()), kd = static_cast<double>(k);
  const double best_above = std::pow(15 * kd * kd / d, 2.0 / 3.0);
  const auto wanted = static_cast<std::size_t>(best_above * d / kd);
  const std::size_t m = std::max(std::min(x.size(), kMinSample), std::min(x.size() / 64, wanted));
  const double above = kd * static_cast<double>(m) / d;
  const auto r = static_cast<std::size_t>(std::ceil(above + 3 * std::sqrt(above) + 2));
  if (r > m) return -1;
  strided_sample(x, m, sample);
  return rank_key(sample, r).key - 1;
}

}  // namespace

void TopkSelector::select(std::span<const float> x, std::size_t k, SparseSet& out) {
  if (k < 1 || k > x.size()) throw std::invalid_argument("top-k select: k outside [1, d]");
  check_indexable(x, "top-k select");
  const std::size_t cap = bounded_cap(x.size(), k);
  const AbsKey t = sample_threshold(x, k, sample_);
  const bool raised = select_above_bounded(x, t, k, cap, out);
  if (!raised && out.size() < k) select_above_bounded(x, -1, k, cap, out);
  keep_top_k(out, k);
}

}  // namespace commsgd::kernels
