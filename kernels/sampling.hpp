#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

// DGC's selection (Lin et al.): a strided sample of m = max(min(d, 1000), ceil(d/100)) entries;
// thr = the key of the ceil(k·m/d)-th largest |sample|; the entries with key >= thr; if more
// than 4k/3 pass, the exact top-k among them (which is x's top-k, since >= k pass). Sorted by
// index; the count varies up to 4k/3. 1 <= k <= x.size(), else std::invalid_argument.
//
// The sample's size m and the rank taken in it, for d entries and k selected: shared with the
// CUDA selector, so that both sample alike.
struct DgcSample {
  std::size_t size, rank;
};
DgcSample dgc_sample(std::size_t d, std::size_t k);

class DgcSelector {
 public:
  void select(std::span<const float> x, std::size_t k, SparseSet& out);

 private:
  std::vector<float> sample_;
};

// k distinct indices uniformly at random from [0, d) (Floyd's algorithm on a bitmap), a function
// of (seed, d, k) alone (own generator, no std:: distribution), so every rank given the same seed
// picks the same indices. Sorted by index, values = x there. 1 <= k <= d.
class RandomSelector {
 public:
  void select(std::span<const float> x, std::size_t k, std::uint64_t seed, SparseSet& out);
  // The indices alone, which depend on no entry of x, into indices[0, k): for a caller that
  // gathers the values elsewhere (the CUDA selector). 1 <= k <= d <= 2^32 - 1.
  void pick(std::size_t d, std::size_t k, std::uint64_t seed, std::span<std::uint32_t> indices);

 private:
  std::vector<std::uint64_t> chosen_;  // one bit per index; all clear between calls
};

}  // namespace commsgd::kernels
