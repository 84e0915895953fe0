// The sparse kernels against brute-force references written from the definitions: a full sort in
// the selection order, the Gaussian-k procedure with plain loops, a std::map union.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "kernels/sampling.hpp"
#include "kernels/simd_path.hpp"
#include "kernels/sparse_ops.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"

namespace commsgd::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> normal_vector(std::size_t n, unsigned seed, float mean = 0, float stddev = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// The order, restated: |x| by its bit pattern without the sign, so NaN ranks above +inf.
std::uint32_t key(float v) {
  return std::bit_cast<std::uint32_t>(v) & 0x7fffffffu;
}
bool before(float a, std::uint32_t ia, float b, std::uint32_t ib) {
  return key(a) != key(b) ? key(a) > key(b) : ia < ib;
}

SparseSet make_set(const std::vector<float>& x, std::vector<std::uint32_t> indices) {
  std::sort(indices.begin(), indices.end());
  SparseSet s;
  s.indices = indices;
  for (const std::uint32_t i : indices) s.values.push_back(x[i]);
  return s;
}

SparseSet reference_topk(const std::vector<float>& x, std::size_t k) {
  std::vector<std::uint32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0u);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](std::uint32_t a, std::uint32_t b) { return before(x[a], a, x[b], b); });
  order.resize(k);
  return make_set(x, order);
}

// Bitwise, so that NaN values compare equal to themselves.
void expect_same(const SparseSet& got, const SparseSet& want) {
  ASSERT_EQ(got.indices.size(), got.values.size());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got.indices[i], want.indices[i]) << "entry " << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got.values[i]),
              std::bit_cast<std::uint32_t>(want.values[i]))
        << "entry " << i << " index " << got.indices[i];
  }
}

void expect_exact_topk(const std::vector<float>& x, std::size_t k) {
  TopkSelector selector;
  SparseSet out;
  selector.select(x, k, out);
  SCOPED_TRACE(testing::Message() << "d " << x.size() << " k " << k);
  expect_same(out, reference_topk(x, k));
}

TEST(ExactTopk, RandomDataAllSizesAndK) {
  for (const std::size_t d : {1, 2, 7, 15, 16, 17, 100, 1003, 100003}) {
    const std::vector<float> x = normal_vector(d, static_cast<unsigned>(d));
    for (const std::size_t k : {std::size_t{1}, std::max<std::size_t>(1, d / 100), d / 2 + 1, d}) {
      expect_exact_topk(x, k);
    }
  }
}

TEST(ExactTopk, PlantedTiesBreakBySmallerIndex) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(-2, 2);
  std::vector<float> x(50021);
  for (float& v : x) v = static_cast<float>(pick(rng));
  // Each k cuts through a group of equal |value| (2: ~40% of entries, 1: ~40%, 0: ~20%).
  for (const std::size_t k : {1, 10, 5000, 20000, 30000, 45000, 50021}) expect_exact_topk(x, k);
}

TEST(ExactTopk, AllEqualAndAllZero) {
  for (const float value : {1.5f, -1.5f, 0.0f, -0.0f}) {
    const std::vector<float> x(10007, value);
    for (const std::size_t k : {1, 100, 10007}) expect_exact_topk(x, k);
  }
}

TEST(ExactTopk, NegativeValues) {
  std::vector<float> x = normal_vector(20011, 4);
  for (float& v : x) v = -std::abs(v) - 1;
  for (const std::size_t k : {1, 200, 20011}) expect_exact_topk(x, k);
}

TEST(ExactTopk, InfinitiesAndNaNRankFirst) {
  std::vector<float> x = normal_vector(30011, 5);
  x[100] = kInf;
  x[200] = -kInf;
  x[300] = kNaN;
  x[29999] = -kNaN;
  expect_exact_topk(x, 1);
  expect_exact_topk(x, 4);
  expect_exact_topk(x, 300);
  TopkSelector selector;
  SparseSet out;
  selector.select(x, 2, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out.indices[0], 300u);  // both NaNs, never hidden behind the infinities
  EXPECT_EQ(out.indices[1], 29999u);
}

// Layouts where a strided sample misjudges the threshold: spikes on one phase of a period (the
// sample sees all of them, or none; d = 2^18 at k = 100 makes the sample stride 64 today), a
// contiguous block of large values, ascending data (every entry beats the ones before it). The
// result must be exact regardless.
TEST(ExactTopk, AdversarialLayoutsStayExact) {
  const std::size_t d = 262144;
  const std::vector<float> noise = normal_vector(d, 6);
  for (const std::size_t period : {16, 64}) {
    for (std::size_t phase = 0; phase < period; phase += period / 16) {
      std::vector<float> spikes = noise;
      for (float& v : spikes) v *= 1e-3f;
      for (std::size_t i = phase; i < d; i += period) {
        spikes[i] = 10.0f + 1e-4f * static_cast<float>(i);
      }
      expect_exact_topk(spikes, 100);
      std::vector<float> holes = noise;
      for (std::size_t i = phase; i < d; i += period) holes[i] = 1e-6f;
      expect_exact_topk(holes, 100);
    }
  }
  for (const std::size_t start : {std::size_t{0}, d / 2, d - 3000}) {
    std::vector<float> block = normal_vector(d, 8);
    for (std::size_t i = start; i < start + 3000; ++i) block[i] *= 1000.0f;
    expect_exact_topk(block, 2000);
    expect_exact_topk(block, 5000);
  }
  std::vector<float> ascending(d);
  for (std::size_t i = 0; i < d; ++i) ascending[i] = static_cast<float>(i) * 0.5f;
  expect_exact_topk(ascending, 100);
  expect_exact_topk(ascending, 30000);
  std::vector<float> descending(ascending.rbegin(), ascending.rend());
  expect_exact_topk(descending, 100);
}

TEST(ExactTopk, SteadyStateReusesItsBuffers) {
  const std::vector<float> x = normal_vector(100000, 9);
  TopkSelector selector;
  SparseSet out;
  selector.select(x, 1000, out);
  const float* values = out.values.data();
  const std::uint32_t* indices = out.indices.data();
  selector.select(x, 1000, out);
  EXPECT_EQ(out.values.data(), values);
  EXPECT_EQ(out.indices.data(), indices);
}

TEST(ExactTopk, RejectsBadK) {
  const std::vector<float> x(10, 1.0f);
  TopkSelector selector;
  SparseSet out;
  EXPECT_THROW(selector.select(x, 0, out), std::invalid_argument);
  EXPECT_THROW(selector.select(x, 11, out), std::invalid_argument);
}

TEST(Threshold, CountAndSelectMatchTheDefinition) {
  std::vector<float> x = normal_vector(10007, 10);
  x[5] = kNaN;
  x[6] = -kInf;
  x[7] = -0.0f;
  for (const float t : {-1.0f, 0.0f, -0.0f, 0.5f, 2.0f, 1e30f, kInf}) {
    std::vector<std::uint32_t> want;
    for (std::uint32_t i = 0; i < x.size(); ++i) {
      if (std::abs(x[i]) > t || std::isnan(x[i])) want.push_back(i);
    }
    EXPECT_EQ(count_abs_greater(x, t), want.size()) << "threshold " << t;
    SparseSet out;
    select_abs_greater(x, t, out);
    expect_same(out, make_set(x, want));
  }
  EXPECT_THROW(count_abs_greater(x, kNaN), std::invalid_argument);
}

TEST(Moments, MatchDoubleReference) {
  for (const std::size_t n : {1, 5, 1023, 1024, 1025, 1000003}) {
    for (const float mean : {0.0f, 3.0f, 1000.0f}) {
      const std::vector<float> x = normal_vector(n, static_cast<unsigned>(n), mean, 2.0f);
      double sum = 0;
      for (const float v : x) sum += v;
      const double ref_mean = sum / static_cast<double>(n);
      double squares = 0;
      for (const float v : x) squares += (v - ref_mean) * (v - ref_mean);
      const double ref_std = std::sqrt(squares / static_cast<double>(n));
      const Moments m = mean_std(x);
      EXPECT_NEAR(m.mean, ref_mean, 1e-6 * (1 + std::abs(ref_mean))) << n << " " << mean;
      EXPECT_NEAR(m.stddev, ref_std, 1e-5 * ref_std + 1e-6) << n << " " << mean;
    }
  }
}

TEST(Moments, HugeValuesFallBackToDouble) {
  std::vector<float> x(5000, 1.0f);
  x[1234] = 1e30f;
  const Moments m = mean_std(x);
  EXPECT_NEAR(m.mean, 1e30 / 5000, 1e30 / 5000 * 1e-6);
  EXPECT_NEAR(m.stddev, 1e30 * std::sqrt(4999.0) / 5000, 1e30 / 5000 * 1e-3);
  EXPECT_THROW(mean_std({}), std::invalid_argument);
}

TEST(NormalQuantile, KnownValuesTailsAndSymmetry) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(normal_quantile(0.9995), 3.290526731491926, 1e-12);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-9);
  EXPECT_NEAR(normal_quantile(1 - 1e-10), 6.361340902404056, 1e-6);  // 1 - 1e-10 is rounded
  EXPECT_NEAR(normal_quantile(1e-20), -9.262340089798405, 1e-9);
  EXPECT_NEAR(normal_quantile(0.3), -0.5244005127080407, 1e-12);
  EXPECT_NEAR(normal_quantile(0.02425), -1.9729610513118845, 1e-12);  // the regions' border
  EXPECT_EQ(normal_quantile(0.5), 0.0);
  EXPECT_TRUE(std::isfinite(normal_quantile(1e-300)));
  for (double p = 0.001; p < 0.5; p += 0.0123) {
    EXPECT_NEAR(normal_quantile(p), -normal_quantile(1 - p), 1e-9) << p;
  }
  for (const double bad : {0.0, 1.0, -0.1, 1.5, std::nan("")}) {
    EXPECT_THROW(normal_quantile(bad), std::invalid_argument) << bad;
  }
}

// The DESIGN procedure with plain loops, from the same moments.
struct ReferenceGaussian {
  float threshold;
  int refinements;
  SparseSet set;
};
ReferenceGaussian reference_gaussian(const std::vector<float>& x, std::size_t k, double density) {
  const Moments m = mean_std(x);
  const double start = std::abs(m.mean) + m.stddev * normal_quantile(1 - density / 2);
  float thr = std::isfinite(start) && start <= std::numeric_limits<float>::max()
                  ? static_cast<float>(start)
                  : std::numeric_limits<float>::max();
  auto passing = [&] {
    std::vector<std::uint32_t> indices;
    for (std::uint32_t i = 0; i < x.size(); ++i) {
      if (std::abs(x[i]) > thr || std::isnan(x[i])) indices.push_back(i);
    }
    return indices;
  };
  int refinements = 0;
  for (; refinements < 3; ++refinements) {
    const double count = static_cast<double>(passing().size());
    if (count < 2.0 * static_cast<double>(k) / 3) {
      thr *= 0.5f;
    } else if (count > 4.0 * static_cast<double>(k) / 3) {
      thr *= 1.5f;
    } else {
      break;
    }
  }
  return {thr, refinements, make_set(x, passing())};
}

void expect_gaussian_matches_reference(const std::vector<float>& x, double density) {
  const auto k = static_cast<std::size_t>(std::ceil(density * static_cast<double>(x.size())));
  GaussianSelector selector;
  SparseSet out;
  const GaussianSelection got = selector.select(x, k, density, out);
  const ReferenceGaussian want = reference_gaussian(x, k, density);
  EXPECT_EQ(got.threshold, want.threshold);
  EXPECT_EQ(got.refinements, want.refinements);
  EXPECT_LE(got.refinements, 3);
  expect_same(out, want.set);
}

TEST(Gaussian, NormalDataHitsTheBandAndMatchesTheProcedure) {
  const std::vector<float> x = normal_vector(1000000, 11);
  for (const double density : {0.001, 0.01}) {
    SCOPED_TRACE(density);
    const auto k = static_cast<std::size_t>(std::ceil(density * static_cast<double>(x.size())));
    GaussianSelector selector;
    SparseSet out;
    selector.select(x, k, density, out);
    EXPECT_GE(3 * out.size(), 2 * k);
    EXPECT_LE(3 * out.size(), 4 * k);
    expect_gaussian_matches_reference(x, density);
  }
}

TEST(Gaussian, HeavyTailsTerminateWithinThreeRefinements) {
  const std::size_t d = 200003;
  std::mt19937 rng(12);
  std::cauchy_distribution<float> cauchy;
  std::lognormal_distribution<float> lognormal(0.0f, 2.0f);
  std::vector<float> c(d), l(d);
  for (float& v : c) v = cauchy(rng);
  for (float& v : l) v = lognormal(rng);
  std::vector<float> outlier = normal_vector(d, 13);
  outlier[777] = 1e6f;
  std::vector<float> huge = normal_vector(d, 14);
  huge[999] = -1e30f;  // squares overflow float
  std::vector<float> nan = normal_vector(d, 15);
  nan[42] = kNaN;
  std::vector<float> constant(d, 0.25f);
  for (const auto* x : {&c, &l, &outlier, &huge, &nan, &constant}) {
    for (const double density : {0.001, 0.01, 0.3}) expect_gaussian_matches_reference(*x, density);
  }
  GaussianSelector selector;
  SparseSet out;
  const GaussianSelection r = selector.select(outlier, 200, 0.001, out);
  EXPECT_EQ(r.refinements, 3);  // σ is dominated by the outlier: three halvings, still too high
  EXPECT_TRUE(std::find(out.indices.begin(), out.indices.end(), 777u) != out.indices.end());
  selector.select(nan, 200, 0.001, out);
  ASSERT_EQ(out.size(), 1u);  // non-finite moments: only the NaN is surfaced
  EXPECT_EQ(out.indices[0], 42u);
}

TEST(Gaussian, RejectsBadArguments) {
  const std::vector<float> x(10, 1.0f);
  GaussianSelector selector;
  SparseSet out;
  EXPECT_THROW(selector.select(x, 0, 0.1, out), std::invalid_argument);
  EXPECT_THROW(selector.select(x, 11, 0.1, out), std::invalid_argument);
  EXPECT_THROW(selector.select(x, 1, 0.0, out), std::invalid_argument);
  EXPECT_THROW(selector.select(x, 1, 1.5, out), std::invalid_argument);
}

// DGC selects a threshold set (everything at or above the smallest key taken), of at most 4k/3
// entries, or falls back to the exact top-k.
void expect_dgc_consistent(const std::vector<float>& x, std::size_t k, bool expect_fallback) {
  DgcSelector selector;
  SparseSet out;
  selector.select(x, k, out);
  SCOPED_TRACE(testing::Message() << "d " << x.size() << " k " << k);
  ASSERT_LE(3 * out.size(), 4 * k);
  const SparseSet exact = reference_topk(x, k);
  if (expect_fallback) {
    expect_same(out, exact);
    return;
  }
  ASSERT_GT(out.size(), 0u);
  std::uint32_t lowest = std::numeric_limits<std::uint32_t>::max();
  for (const float v : out.values) lowest = std::min(lowest, key(v));
  std::vector<std::uint32_t> want;
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    if (key(x[i]) >= lowest) want.push_back(i);
  }
  if (want.size() == out.size()) {
    expect_same(out, make_set(x, want));
  } else {
    expect_same(out, exact);  // the fallback took the top-k out of a tie at the lowest key
  }
}

TEST(Dgc, ThresholdSetOrExactTopk) {
  for (const std::size_t d : {1, 10, 999, 1000, 100003, 1000000}) {
    const std::vector<float> x = normal_vector(d, static_cast<unsigned>(d + 1));
    for (const std::size_t k : {std::size_t{1}, std::max<std::size_t>(1, d / 1000), d / 100 + 1}) {
      expect_dgc_consistent(x, k, false);
    }
  }
}

TEST(Dgc, MissedBlockTriggersTheExactFallback) {
  // m = 1000 samples at stride 100 centred at 50: large values everywhere else in the first
  // 5000 entries are invisible to the sample, and all pass its threshold.
  const std::size_t d = 100000;
  std::vector<float> x = normal_vector(d, 16);
  for (float& v : x) v *= 1e-3f;
  for (std::size_t i = 0; i < 5000; ++i) {
    if (i % 100 != 50) x[i] = 1.0f + static_cast<float>(i % 13);
  }
  expect_dgc_consistent(x, 100, true);
  std::vector<float> ties(d, 1.0f);
  expect_dgc_consistent(ties, 100, true);
}

TEST(Random, DistinctSortedInRangeAndSeeded) {
  const std::vector<float> x = normal_vector(100003, 17);
  RandomSelector selector;
  SparseSet a, b, c;
  selector.select(x, 1000, 42, a);
  selector.select(x, 1000, 42, b);
  selector.select(x, 1000, 43, c);
  ASSERT_EQ(a.size(), 1000u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_LT(a.indices[i], x.size());
    if (i > 0) {
      ASSERT_LT(a.indices[i - 1], a.indices[i]);
    }
    ASSERT_EQ(a.values[i], x[a.indices[i]]);
  }
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_NE(a.indices, c.indices);
  RandomSelector other;  // another rank: same seed, same set
  SparseSet d;
  other.select(x, 1000, 42, d);
  EXPECT_EQ(a.indices, d.indices);
  selector.select(x, x.size(), 7, d);
  ASSERT_EQ(d.size(), x.size());
  for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d.indices[i], i);
}

TEST(Random, PickGivesSelectsIndicesWithoutTheValues) {
  const std::vector<float> x = normal_vector(5000, 23);
  RandomSelector selector;
  SparseSet selected;
  selector.select(x, 77, 9, selected);
  std::vector<std::uint32_t> picked(77);
  selector.pick(x.size(), 77, 9, picked);
  EXPECT_EQ(picked, selected.indices);
  EXPECT_THROW(selector.pick(x.size(), 0, 9, picked), std::invalid_argument);
  EXPECT_THROW(selector.pick(10, 11, 9, picked), std::invalid_argument);
  EXPECT_THROW(selector.pick(x.size(), 78, 9, picked), std::invalid_argument) << "room for 77";
}

TEST(Random, RoughlyUniform) {
  const std::size_t d = 100, k = 10, trials = 20000;
  const std::vector<float> x(d, 1.0f);
  RandomSelector selector;
  SparseSet s;
  std::vector<double> hits(d, 0);
  for (std::size_t t = 0; t < trials; ++t) {
    selector.select(x, k, t, s);
    for (const std::uint32_t i : s.indices) ++hits[i];
  }
  const double expected = static_cast<double>(trials * k) / d;
  double chi2 = 0;
  for (const double h : hits) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 99 + 6 * std::sqrt(2 * 99.0));  // 99 degrees of freedom, six sigma
}

SparseSet reference_merge(const SparseSet& a, const SparseSet& b, std::size_t k) {
  std::map<std::uint32_t, float> sum;
  for (std::size_t i = 0; i < a.size(); ++i) sum[a.indices[i]] = a.values[i];
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto it = sum.find(b.indices[i]);
    if (it == sum.end()) {
      sum[b.indices[i]] = b.values[i];
    } else {
      it->second = it->second + b.values[i];
    }
  }
  std::vector<std::pair<std::uint32_t, float>> entries(sum.begin(), sum.end());
  std::sort(entries.begin(), entries.end(), [](const auto& p, const auto& q) {
    return before(p.second, p.first, q.second, q.first);
  });
  entries.resize(std::min(k, entries.size()));
  std::sort(entries.begin(), entries.end());
  SparseSet out;
  for (const auto& [index, value] : entries) {
    out.indices.push_back(index);
    out.values.push_back(value);
  }
  return out;
}

SparseSet random_set(std::mt19937& rng, std::size_t n, std::uint32_t range, bool small_values) {
  std::set<std::uint32_t> indices;
  std::uniform_int_distribution<std::uint32_t> index(0, range - 1);
  while (indices.size() < n) indices.insert(index(rng));
  std::uniform_int_distribution<int> small(-2, 2);
  std::normal_distribution<float> normal;
  SparseSet s;
  for (const std::uint32_t i : indices) {
    s.indices.push_back(i);
    s.values.push_back(small_values ? static_cast<float>(small(rng)) : normal(rng));
  }
  return s;
}

// Unions of up to 600 entries, whose k-th the merge finds among all of them.
TEST(MergeKeepK, MatchesReference) {
  std::mt19937 rng(18);
  for (const bool small_values : {false, true}) {
    for (const std::size_t k : {1, 50, 100, 150, 400}) {
      const SparseSet a = random_set(rng, 100, 300, small_values);
      const SparseSet b = random_set(rng, 100, 300, small_values);
      SparseSet out;
      merge_keep_k(a, b, k, out);
      SCOPED_TRACE(testing::Message() << "k " << k << " small " << small_values);
      expect_same(out, reference_merge(a, b, k));
    }
  }
}

// Unions larger than 1024 entries, where the k-th is found from a bracket of sampled keys:
// disjoint and overlapping sets, distinct and heavily tied values.
TEST(MergeKeepK, LargeUnionsMatchTheReference) {
  std::mt19937 rng(19);
  for (const bool small_values : {false, true}) {
    for (const std::uint32_t range : {200'000u, 12'000u}) {  // few shared indices, then many
      const SparseSet a = random_set(rng, 5'000, range, small_values);
      const SparseSet b = random_set(rng, 5'000, range, small_values);
      for (const std::size_t k : {1, 700, 5'000, 9'000}) {
        SparseSet out;
        merge_keep_k(a, b, k, out);
        SCOPED_TRACE(testing::Message()
                     << "k " << k << " range " << range << " small " << small_values);
        expect_same(out, reference_merge(a, b, k));
      }
    }
  }
}

// Sets whose indices do not interleave evenly: one all below or all above the other, one far
// smaller, one empty. The merge cuts the union at a's middle entry into runs it interleaves, so
// a run can lack one side or all of it.
TEST(MergeKeepK, LopsidedSetsMatchTheReference) {
  std::mt19937 rng(20);
  const auto shifted = [](SparseSet s, std::uint32_t by) {
    for (std::uint32_t& i : s.indices) i += by;
    return s;
  };
  const SparseSet low = random_set(rng, 3'000, 100'000, false);
  const SparseSet high = shifted(random_set(rng, 3'000, 100'000, false), 100'000);
  const SparseSet few = random_set(rng, 40, 200'000, false);
  const SparseSet middle = shifted(random_set(rng, 1'500, 50'000, false), 75'000);
  const std::pair<SparseSet, SparseSet> pairs[] = {
      {low, high},   {high, low},   {few, low},          {low, few},
      {middle, low}, {low, middle}, {SparseSet{}, high}, {high, SparseSet{}}};
  for (std::size_t p = 0; p < std::size(pairs); ++p) {
    const auto& [a, b] = pairs[p];
    for (const std::size_t k : {1, 1'000, 3'000, 7'000}) {
      SparseSet out;
      merge_keep_k(a, b, k, out);
      SCOPED_TRACE(testing::Message() << "pair " << p << " k " << k);
      expect_same(out, reference_merge(a, b, k));
    }
  }
}

// A sample that misjudges the k-th: the strided positions the merge samples hold small values,
// the others large ones, so the bracket around the sampled k-th holds too few; the exact answer
// comes from the full selection instead.
TEST(MergeKeepK, ASkewedSampleStillGivesTheExactSet) {
  constexpr std::size_t n = 3'000;
  SparseSet a;
  for (std::uint32_t i = 0; i < n; ++i) {
    a.indices.push_back(i);
    a.values.push_back(2.0f + static_cast<float>(i % 7));
  }
  for (std::size_t j = 0; j < 1024; ++j) a.values[j * n / 1024] = 1.0f;
  for (const std::size_t k : {10, 1'000, 1'976, 1'977, 2'500}) {
    SparseSet out;
    merge_keep_k(a, SparseSet{}, k, out);
    SCOPED_TRACE(testing::Message() << "k " << k);
    expect_same(out, reference_merge(a, SparseSet{}, k));
  }
}

TEST(MergeKeepK, SharedIndicesSumAndTiesGoToSmallerIndex) {
  SparseSet a{{1.0f, 2.0f, -3.0f}, {1, 5, 9}};
  SparseSet b{{2.0f, -2.0f, 3.0f}, {2, 5, 7}};
  SparseSet out;
  merge_keep_k(a, b, 3, out);  // union {1:1, 2:2, 5:0, 7:3, 9:-3}; |3| twice, then 2
  expect_same(out, SparseSet{{2.0f, 3.0f, -3.0f}, {2, 7, 9}});
  merge_keep_k(a, b, 2, out);
  expect_same(out, SparseSet{{3.0f, -3.0f}, {7, 9}});
  merge_keep_k(a, b, 10, out);  // the union is smaller than k: all of it
  expect_same(out, SparseSet{{1.0f, 2.0f, 0.0f, 3.0f, -3.0f}, {1, 2, 5, 7, 9}});
  merge_keep_k(a, SparseSet{}, 2, out);
  expect_same(out, SparseSet{{2.0f, -3.0f}, {5, 9}});
}

// gTop-k's survival tracking: one side's entries tagged with their positions, the other's with
// kUntagged; the kept entries are the untagged merge's, and each carries its own side's tag when
// that side had the index. Both sides tagged: a shared index gets the AND of the two.
TEST(MergeKeepK, TagsFollowTheirEntries) {
  std::mt19937 rng(20);
  for (const std::uint32_t range : {200'000u, 12'000u}) {
    const SparseSet a = random_set(rng, 5'000, range, false);
    const SparseSet b = random_set(rng, 5'000, range, false);
    std::vector<std::uint32_t> positions(a.size());
    std::iota(positions.begin(), positions.end(), 0u);
    const std::vector<std::uint32_t> untagged(b.size(), kUntagged);
    for (const std::size_t k : {1, 700, 5'000, 9'000}) {
      SCOPED_TRACE(testing::Message() << "k " << k << " range " << range);
      SparseSet plain, tagged, swapped;
      std::vector<std::uint32_t> tags, swapped_tags;
      merge_keep_k(a, b, k, plain);
      merge_keep_k(a, positions, b, untagged, k, tagged, tags);
      expect_same(tagged, plain);
      ASSERT_EQ(tags.size(), tagged.size());
      for (std::size_t i = 0; i < tagged.size(); ++i) {
        const auto at = std::lower_bound(a.indices.begin(), a.indices.end(), tagged.indices[i]);
        const bool in_a = at != a.indices.end() && *at == tagged.indices[i];
        EXPECT_EQ(tags[i], in_a ? static_cast<std::uint32_t>(at - a.indices.begin()) : kUntagged)
            << tagged.indices[i];
      }
      merge_keep_k(b, untagged, a, positions, k, swapped, swapped_tags);  // the tagged side second
      for (std::size_t i = 0; i < swapped.size(); ++i) {
        const auto at =
            std::lower_bound(tagged.indices.begin(), tagged.indices.end(), swapped.indices[i]);
        if (at != tagged.indices.end() && *at == swapped.indices[i]) {
          EXPECT_EQ(swapped_tags[i], tags[static_cast<std::size_t>(at - tagged.indices.begin())]);
        }
      }
    }
  }
  SparseSet out;
  std::vector<std::uint32_t> tags;
  merge_keep_k(SparseSet{{1.0f, 2.0f}, {3, 5}}, std::vector<std::uint32_t>{0b1100, 0b0001},
               SparseSet{{4.0f}, {3}}, std::vector<std::uint32_t>{0b1010}, 2, out, tags);
  expect_same(out, SparseSet{{5.0f, 2.0f}, {3, 5}});
  EXPECT_EQ(tags, (std::vector<std::uint32_t>{0b1000, 0b0001}));
  EXPECT_THROW(merge_keep_k(SparseSet{{1.0f}, {3}}, std::vector<std::uint32_t>{}, SparseSet{},
                            std::vector<std::uint32_t>{}, 1, out, tags),
               std::invalid_argument);
}

// gTop-k's last round: the merge marks which entries of one input have their index in its output.
// Unions small and large (found among all entries, or from a sampled bracket), few and many
// shared indices (whose sums decide), distinct and heavily tied values (ties go to the smaller
// index), and unions of at most k (everything kept).
TEST(MergeKeepK, MarksTheEntriesOfOneInputThatAreInTheOutput) {
  std::mt19937 rng(21);
  for (const bool small_values : {false, true}) {
    for (const auto& [n, range] :
         {std::pair<std::size_t, std::uint32_t>{100, 300}, {5'000, 200'000}, {5'000, 12'000}}) {
      const SparseSet a = random_set(rng, n, range, small_values);
      const SparseSet b = random_set(rng, n, range, small_values);
      for (const std::size_t k : {std::size_t{1}, n / 7, n, 2 * n - n / 3, 2 * n}) {
        SCOPED_TRACE(testing::Message()
                     << "n " << n << " range " << range << " k " << k << " small " << small_values);
        SparseSet plain;
        merge_keep_k(a, b, k, plain);
        for (const MergeInput side : {MergeInput::a, MergeInput::b}) {
          const SparseSet& marked = side == MergeInput::a ? a : b;
          SparseSet out;
          std::vector<std::uint8_t> marks(3, 7);  // whatever it held before
          merge_keep_k(a, b, k, out, side, marks);
          expect_same(out, plain);
          ASSERT_EQ(marks.size(), marked.size());
          for (std::size_t i = 0; i < marked.size(); ++i) {
            const bool in_out =
                std::binary_search(out.indices.begin(), out.indices.end(), marked.indices[i]);
            ASSERT_EQ(marks[i], in_out ? 1 : 0) << "entry " << i << ", index " << marked.indices[i];
          }
        }
      }
    }
  }
  // A shared index whose sum falls out although one part alone would be kept, and one whose sum
  // is kept although neither part alone would be.
  const SparseSet a{{5.0f, 1.5f, 2.0f}, {1, 4, 8}};
  const SparseSet b{{-5.0f, 1.5f, 0.5f}, {1, 4, 6}};  // union {1:0, 4:3, 6:0.5, 8:2}
  SparseSet out;
  std::vector<std::uint8_t> marks;
  merge_keep_k(a, b, 2, out, MergeInput::a, marks);
  expect_same(out, SparseSet{{3.0f, 2.0f}, {4, 8}});
  EXPECT_EQ(marks, (std::vector<std::uint8_t>{0, 1, 1}));
  merge_keep_k(a, b, 2, out, MergeInput::b, marks);
  EXPECT_EQ(marks, (std::vector<std::uint8_t>{0, 1, 0}));
}

// The path the merge tests above run on is the one their run's environment asks for
// (tests/CMakeLists.txt runs them under each cap): the caps hold, and without one the widest
// path the CPU has is taken.
TEST(MergeKeepK, TakesThePathTheEnvironmentAllows) {
  const SimdPath path = merge_simd_path();
  std::cout << "gTop-k's merge runs on " << name_of(path) << "\n";
  const bool no_avx2 = std::getenv("COMMSGD_NO_AVX2") != nullptr;
  const bool no_avx512 = std::getenv("COMMSGD_NO_AVX512") != nullptr;
  if (no_avx2) {
    EXPECT_EQ(path, SimdPath::portable);
  }
  if (no_avx512) {
    EXPECT_NE(path, SimdPath::avx512);
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!no_avx2 && __builtin_cpu_supports("avx2")) {
    EXPECT_NE(path, SimdPath::portable);
  }
  if (!no_avx2 && !no_avx512 && __builtin_cpu_supports("avx512bw")) {
    EXPECT_EQ(path, SimdPath::avx512);
  }
#else
  EXPECT_EQ(path, SimdPath::portable);
#endif
}

// Every path this CPU has, switched to in one process, gives the same sets, tags and marks bit
// for bit: large unions (a sampled bracket), many and few shared indices, ties.
TEST(MergeKeepK, EveryPathGivesTheSameBits) {
  std::mt19937 rng(23);
  const SimdPath before = merge_simd_path();
  for (const bool small_values : {false, true}) {
    for (const std::uint32_t range : {200'000u, 12'000u}) {
      const SparseSet a = random_set(rng, 5'003, range, small_values);
      const SparseSet b = random_set(rng, 4'999, range, small_values);
      std::vector<std::uint32_t> positions(a.size());
      std::iota(positions.begin(), positions.end(), 0u);
      const std::vector<std::uint32_t> untagged(b.size(), kUntagged);
      for (const std::size_t k : {1, 700, 5'000, 9'000}) {
        SCOPED_TRACE(testing::Message() << "k " << k << " range " << range);
        std::vector<SparseSet> plain, tagged;
        std::vector<std::vector<std::uint32_t>> tags;
        std::vector<std::vector<std::uint8_t>> marks;
        for (const SimdPath path : merge_simd_paths()) {
          use_merge_simd_path(path);
          plain.emplace_back();
          tagged.emplace_back();
          tags.emplace_back();
          marks.emplace_back();
          merge_keep_k(a, b, k, plain.back(), MergeInput::b, marks.back());
          merge_keep_k(a, positions, b, untagged, k, tagged.back(), tags.back());
        }
        for (std::size_t p = 1; p < plain.size(); ++p) {
          SCOPED_TRACE(testing::Message() << name_of(merge_simd_paths()[p]));
          expect_same(plain[p], plain[0]);
          expect_same(tagged[p], tagged[0]);
          EXPECT_EQ(tags[p], tags[0]);
          EXPECT_EQ(marks[p], marks[0]);
        }
      }
    }
  }
  use_merge_simd_path(before);
  if (merge_simd_paths().back() != SimdPath::avx512) {
    EXPECT_THROW(use_merge_simd_path(SimdPath::avx512), std::invalid_argument);
  }
}

// Every pair of sizes up to 40, around the SIMD paths' blocks (16 entries with AVX-512, 8 with
// AVX2) and their tails, in both orders: many shared indices, ties and distinct values, indices
// low, across 2^31 (where a signed compare would order them wrongly) and at the top of the 32-bit
// range, with the first side's marks; and a descent at every position of an input is refused.
TEST(MergeKeepK, EverySizeAroundTheBlocks) {
  std::mt19937 rng(22);
  constexpr std::size_t kMax = 40;
  constexpr auto kSpan = static_cast<std::uint32_t>(4 * kMax + 1);  // the widest index range
  for (const std::uint32_t base : {0u, 0x80000000u - kSpan / 2, 0xffffffffu - kSpan}) {
    for (std::size_t na = 0; na <= kMax; ++na) {
      for (std::size_t nb = 0; nb <= kMax; ++nb) {
        const auto range = static_cast<std::uint32_t>(2 * (na + nb) + 1);
        SparseSet a = random_set(rng, na, range, (na + nb) % 2 == 0);
        SparseSet b = random_set(rng, nb, range, (na + nb) % 2 == 0);
        for (SparseSet* s : {&a, &b}) {
          for (std::uint32_t& i : s->indices) i += base;
        }
        for (const std::size_t k : {std::size_t{1}, (na + nb) / 2 + 1, na + nb + 1}) {
          SCOPED_TRACE(testing::Message()
                       << "base " << base << " sizes " << na << ", " << nb << " k " << k);
          for (const bool swapped : {false, true}) {
            const SparseSet& first = swapped ? b : a;
            const SparseSet& second = swapped ? a : b;
            SparseSet out;
            std::vector<std::uint8_t> marks;
            merge_keep_k(first, second, k, out, MergeInput::a, marks);
            expect_same(out, reference_merge(first, second, k));
            ASSERT_EQ(marks.size(), first.size());
            for (std::size_t i = 0; i < first.size(); ++i) {
              ASSERT_EQ(marks[i],
                        std::binary_search(out.indices.begin(), out.indices.end(), first.indices[i])
                            ? 1
                            : 0);
            }
          }
        }
      }
    }
  }
  for (std::size_t n = 2; n <= kMax; ++n) {
    for (std::size_t at = 1; at < n; ++at) {
      SparseSet a = random_set(rng, n, 1000, false);
      a.indices[at] = a.indices[at - 1];
      SparseSet out;
      EXPECT_THROW(merge_keep_k(a, SparseSet{}, 1, out), std::invalid_argument)
          << n << " entries, repeated at " << at;
    }
  }
}

TEST(MergeKeepK, RejectsBadInput) {
  SparseSet a{{1.0f, 2.0f}, {5, 3}};
  SparseSet b{{1.0f}, {4}};
  SparseSet out;
  EXPECT_THROW(merge_keep_k(a, b, 2, out), std::invalid_argument);
  EXPECT_THROW(merge_keep_k(b, b, 2, b), std::invalid_argument);
  EXPECT_THROW(merge_keep_k(b, SparseSet{{1.0f}, {}}, 2, out), std::invalid_argument);
  EXPECT_THROW(merge_keep_k(b, b, 0, out), std::invalid_argument);
}

TEST(DenseOps, ScatterAddAddAndZeroApplied) {
  std::vector<float> dense(37, 1.0f);
  const SparseSet s{{2.0f, -1.0f, 0.5f}, {0, 17, 36}};
  scatter_add(s, dense);
  EXPECT_EQ(dense[0], 3.0f);
  EXPECT_EQ(dense[17], 0.0f);
  EXPECT_EQ(dense[36], 1.5f);
  EXPECT_EQ(dense[1], 1.0f);

  std::vector<float> acc = normal_vector(37, 19);
  const std::vector<float> g = normal_vector(37, 20);
  std::vector<float> want = acc;
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += g[i];
  add(acc, g);
  EXPECT_EQ(acc, want);

  dense[17] = 4.0f;
  zero_applied(dense, s, std::vector<std::uint8_t>{1, 0, 1});
  EXPECT_EQ(dense[0], 0.0f);
  EXPECT_EQ(dense[17], 4.0f);  // selected, not applied: stays in the residual
  EXPECT_EQ(dense[36], 0.0f);
  EXPECT_EQ(dense[1], 1.0f);

  std::vector<float> short_dense(36);
  EXPECT_THROW(scatter_add(s, short_dense), std::invalid_argument);
  EXPECT_THROW(add(acc, short_dense), std::invalid_argument);
  EXPECT_THROW(zero_applied(dense, s, std::vector<std::uint8_t>{1, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::kernels
