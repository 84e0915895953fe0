#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sampling.hpp"
#include "kernels/sparse_set.hpp"
#include "kernels/topk.hpp"

namespace commsgd::kernels {

// Selectors as the GaussianK-SGD code computes them (compression.py at 3da1fb3), beside the
// papers' versions in threshold.hpp and sampling.hpp; configs/papers/FIDELITY.md lists how they
// differ. Each writes the entries it picks sorted by index, values = x there, and, like the
// originals, the count may differ from k. "|x| > t" is the comparison of abs_order.hpp. 1 <= k <=
// x.size(), else std::invalid_argument.

// Gaussian-k as GaussianCompressor: μ the signed mean and σ the unbiased (n − 1) deviation of x;
// thr = μ + σ·Φ⁻¹(1 − ρ/2), in double, compared in float; at most three counts: after the first
// and second, if 3·count < 2k the threshold halves, if 3·count > 4k it grows by half, else the
// loop ends; the third count is final (the original's loop computes a third update but never
// applies it). ρ is the density itself (the original's `ratio`), not k/d.
class GksgdGaussianSelector {
 public:
  void select(std::span<const float> x, std::size_t k, double density, SparseSet& out);
};

// DGC sampling as DGCSamplingCompressor: a 1% sample of the entries drawn at random without
// replacement (m = floor(d/100) entries, from `seed`); thr = the k-th largest |sample| with k
// itself, not scaled to the sample's size; the entries |x| > thr; if more than 4k/3 pass, the
// exact top-k among them, so exactly k (the usual case: at ρ = 0.001 about 10% pass). When the
// sample has fewer than k entries the original fails (torch.topk of k > m); here that selects the
// exact top-k.
class GksgdDgcSelector {
 public:
  void select(std::span<const float> x, std::size_t k, std::uint64_t seed, SparseSet& out);

 private:
  RandomSelector sampler_;
  TopkSelector topk_;
  std::vector<std::uint32_t> sample_indices_;
  std::vector<float> sample_;
  SparseSet candidates_;
};

// RedSync's threshold search as RedSyncCompressor: thr = mean|x| + m·(max|x| − mean|x|) (float,
// as its tensors are) with m bisecting [0, 1]; count |x| > thr; stop when k < count < 2k, move
// down when count < k/2, else up (also when k/2 <= count <= k, the original's quirk, which raises
// the threshold though too few pass); while the interval is wider than 0.2, so at most three
// counts. Selects what passes the last one.
class RedsyncSelector {
 public:
  void select(std::span<const float> x, std::size_t k, SparseSet& out);
};

}  // namespace commsgd::kernels
