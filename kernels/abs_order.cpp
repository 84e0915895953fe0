#include "kernels/abs_order.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace commsgd::kernels {

AbsKey key_threshold(float threshold) {
  if (std::isnan(threshold)) throw std::invalid_argument("threshold is NaN");
  // Every |x| >= 0 exceeds a negative threshold; -0.0 has key 0 and passes |x| > 0, as it should.
  return threshold < 0.0f ? -1 : abs_key(threshold);
}

void check_indexable(std::span<const float> x, const char* who) {
  if (x.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument(std::string(who) + ": more entries than uint32 indices address");
  }
}

RankedKey rank_key(std::span<const float> values, std::size_t r) {
  // Three digits of the 31 key bits, most significant first; each pass counts only the entries
  // that share the digits fixed so far.
  struct Digit {
    int shift, bits;
  };
  constexpr std::array<Digit, 3> digits = {{{21, 10}, {10, 11}, {0, 10}}};
  // Gradients crowd into a few buckets, and consecutive increments of one counter wait for each
  // other (store to load): four histograms, one per position mod 4, let them overlap.
  constexpr std::size_t kLanes = 4;
  std::array<std::array<std::uint32_t, 2048>, kLanes> lanes;
  std::array<std::uint32_t, 2048> histogram;
  std::uint32_t prefix = 0, prefix_mask = 0;
  std::size_t remaining = r;  // rank still to find among the entries matching the prefix
  const float* v = values.data();
  const std::size_t n = values.size();
  for (const Digit& digit : digits) {
    const std::uint32_t buckets = 1u << digit.bits, bucket_mask = buckets - 1;
    for (auto& lane : lanes) std::fill_n(lane.begin(), buckets, 0u);
    const auto count = [&](std::size_t lane, float value) {
      const auto key = static_cast<std::uint32_t>(abs_key(value));
      lanes[lane][(key >> digit.shift) & bucket_mask] += (key & prefix_mask) == prefix;
    };
    std::size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (std::size_t lane = 0; lane < kLanes; ++lane) count(lane, v[i + lane]);
    }
    for (; i < n; ++i) count(0, v[i]);
    for (std::uint32_t b = 0; b < buckets; ++b) {
      histogram[b] = lanes[0][b] + lanes[1][b] + lanes[2][b] + lanes[3][b];
    }
    std::uint32_t bucket = buckets - 1;
    while (remaining > histogram[bucket]) remaining -= histogram[bucket--];
    prefix |= bucket << digit.shift;
    prefix_mask |= bucket_mask << digit.shift;
  }
  return {static_cast<AbsKey>(prefix), remaining};
}

namespace {

// Moves the `keep` entries a cut keeps (every key above cut.key, and the first cut.equal_taken
// equal to it) to the front, in their original order. Which entries are kept depends on their
// values: no branch on it, which would be mispredicted. Every entry is written at `kept`, which
// advances only past those taken, never passes the read at i, and stops once `keep` are taken.
void keep_in_order(float* values, std::uint32_t* indices, std::size_t n, RankedKey cut,
                   std::size_t keep) {
  std::size_t kept = 0, equal_left = cut.equal_taken;
  for (std::size_t i = 0; i < n && kept < keep; ++i) {
    const AbsKey key = abs_key(values[i]);
    const std::size_t equal = key == cut.key;
    const std::size_t take = static_cast<std::size_t>(key > cut.key) | (equal & (equal_left != 0));
    equal_left -= equal & take;
    values[kept] = values[i];
    indices[kept] = indices[i];
    kept += take;
  }
}

}  // namespace

AbsKey keep_top_k(float* values, std::uint32_t* indices, std::size_t n, std::size_t k) {
  const RankedKey cut = rank_key({values, n}, k);
  keep_in_order(values, indices, n, cut, k);
  return cut.key;
}

void keep_top_k(SparseSet& s, std::size_t k) {
  if (s.size() <= k) return;
  keep_top_k(s.values.data(), s.indices.data(), s.size(), k);
  s.values.resize(k);
  s.indices.resize(k);
}

void strided_sample(std::span<const float> x, std::size_t m, std::vector<float>& sample) {
  const std::uint64_t d = x.size();
  const std::uint64_t half_stride = d / (2 * m);
  sample.resize(m);
  for (std::uint64_t j = 0; j < m; ++j) sample[j] = x[j * d / m + half_stride];
}

}  // namespace commsgd::kernels
