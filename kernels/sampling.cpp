#include "kernels/sampling.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/abs_order.hpp"
#include "kernels/bounded_selection.hpp"

namespace commsgd::kernels {
namespace {

void check_k(std::span<const float> x, std::size_t k, const char* who) {
  if (k < 1 || k > x.size()) throw std::invalid_argument(std::string(who) + ": k outside [1, d]");
  check_indexable(x, who);
}

// SplitMix64 (Steele, Lea, Flood 2014): fixed arithmetic, the same stream on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

// Uniform in [0, range), unbiased (Lemire 2019: multiply, reject the short first interval).
std::uint32_t uniform_below(SplitMix64& rng, std::uint32_t range) {
  std::uint64_t m = (rng.next() >> 32) * range;
  if (static_cast<std::uint32_t>(m) < range) {
    const std::uint32_t reject_below = (0u - range) % range;  // 2^32 mod range
    while (static_cast<std::uint32_t>(m) < reject_below) m = (rng.next() >> 32) * range;
  }
  return static_cast<std::uint32_t>(m >> 32);
}

}  // namespace

DgcSample dgc_sample(std::size_t d, std::size_t k) {
  const std::size_t m = std::max(std::min<std::size_t>(d, 1000), (d + 99) / 100);
  // ceil(k·m/d), in [1, m]; k·m can pass 64 bits when d nears 2^32.
  const auto rank = static_cast<std::size_t>((static_cast<unsigned __int128>(k) * m + d - 1) / d);
  return {m, rank};
}

void DgcSelector::select(std::span<const float> x, std::size_t k, SparseSet& out) {
  check_k(x, k, "dgc select");
  const std::size_t d = x.size();
  const DgcSample sample = dgc_sample(d, k);
  strided_sample(x, sample.size, sample_);
  const AbsKey thr = rank_key(sample_, sample.rank).key;
  const bool raised = select_above_bounded(x, thr - 1, k, bounded_cap(d, k), out);
  if (raised || 3 * out.size() > 4 * k) keep_top_k(out, k);
}

void RandomSelector::select(std::span<const float> x, std::size_t k, std::uint64_t seed,
                            SparseSet& out) {
  check_k(x, k, "random select");
  out.indices.resize(k);
  pick(x.size(), k, seed, out.indices);
  out.values.resize(k);
  for (std::size_t n = 0; n < k; ++n) out.values[n] = x[out.indices[n]];
}

void RandomSelector::pick(std::size_t d, std::size_t k, std::uint64_t seed,
                          std::span<std::uint32_t> indices) {
  if (k < 1 || k > d) throw std::invalid_argument("random select: k outside [1, d]");
  if (d > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("random select: more entries than uint32 indices address");
  }
  if (indices.size() < k) throw std::invalid_argument("random select: room for fewer than k");
  const auto n = static_cast<std::uint32_t>(d);
  const std::size_t words = (d + 63) / 64;
  if (chosen_.size() < words) chosen_.resize(words);
  std::uint64_t* chosen = chosen_.data();
  auto is_chosen = [&](std::uint32_t i) { return (chosen[i / 64] >> (i % 64)) & 1u; };
  // Floyd: for j = d-k .. d-1 pick t in [0, j]; take t, or j if t is taken already.
  SplitMix64 rng(seed);
  for (std::uint32_t j = n - static_cast<std::uint32_t>(k); j < n; ++j) {
    const std::uint32_t t = uniform_below(rng, j + 1);
    const std::uint32_t picked = is_chosen(t) ? j : t;
    chosen[picked / 64] |= std::uint64_t{1} << (picked % 64);
  }
  // Reading the bitmap in order sorts the picks and clears it for the next call.
  std::size_t taken = 0;
  for (std::size_t w = 0; w < words; ++w) {
    for (std::uint64_t bits = chosen[w]; bits != 0; bits &= bits - 1) {
      indices[taken++] = static_cast<std::uint32_t>(64 * w + std::countr_zero(bits));
    }
    chosen[w] = 0;
  }
}

}  // namespace commsgd::kernels
