// The selectors of the GaussianK-SGD code (compression.py at 3da1fb3), each against a literal
// transcription of the original's steps written here, and for its defining property.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "algorithms/sparse/selector.hpp"
#include "kernels/moments.hpp"
#include "kernels/original_selectors.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"

namespace commsgd::kernels {
namespace {

std::vector<float> normal(std::size_t n, double mean, double stddev, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(static_cast<float>(mean), static_cast<float>(stddev));
  std::vector<float> x(n);
  for (float& v : x) v = dist(gen);
  return x;
}

std::vector<float> laplace(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::exponential_distribution<float> dist(1.0f);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> x(n);
  for (float& v : x) v = sign(gen) ? dist(gen) : -dist(gen);
  return x;
}

std::vector<std::uint32_t> passing(const std::vector<float>& x, float threshold) {
  std::vector<std::uint32_t> indices;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::abs(x[i]) > threshold) indices.push_back(static_cast<std::uint32_t>(i));
  }
  return indices;
}

// compression.py:141-164: std = torch.std(x) (unbiased), mean = torch.mean(x), thr = the right
// end of the two-sided normal interval; `while loops < 3` counts, updates, loops += 1; the last
// update is never applied.
struct GaussianReference {
  std::vector<std::uint32_t> indices;
  int applied_updates = 0;
};
GaussianReference gaussian_reference(const std::vector<float>& x, std::size_t k, double ratio) {
  double sum = 0, squares = 0;
  for (const float v : x) sum += v;
  const double n = static_cast<double>(x.size());
  const double mean = sum / n;
  for (const float v : x) squares += (v - mean) * (v - mean);
  const double std = std::sqrt(squares / (n - 1));
  double thr = mean + std * normal_quantile(1 - ratio / 2);
  GaussianReference r;
  for (int loops = 0; loops < 3; ++loops) {
    r.indices = passing(x, static_cast<float>(thr));
    const double count = static_cast<double>(r.indices.size());
    if (count < 2.0 * static_cast<double>(k) / 3) {
      thr *= 0.5;
    } else if (count > 4.0 * static_cast<double>(k) / 3) {
      thr *= 1.5;
    } else {
      break;
    }
    if (loops < 2) ++r.applied_updates;
  }
  return r;
}

TEST(OriginalSelectors, GaussianGksgdIsTheOriginalsComputation) {
  GksgdGaussianSelector selector;
  SparseSet out;
  int cases_refined_twice = 0;
  for (const double density : {0.001, 0.004, 0.015625}) {
    for (const unsigned seed : {1u, 2u, 3u}) {
      for (const auto& x : {normal(200000, 0.01, 1.0, seed), laplace(200000, seed)}) {
        const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(density * x.size()));
        const GaussianReference expected = gaussian_reference(x, k, density);
        selector.select(x, k, density, out);
        ASSERT_EQ(out.indices, expected.indices) << density << " " << seed;
        for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out.values[i], x[out.indices[i]]);
        cases_refined_twice += expected.applied_updates == 2;
      }
    }
  }
  // Laplace tails are heavier than the Gaussian's: the threshold undershoots and needs the most
  // refinements the original applies.
  EXPECT_GT(cases_refined_twice, 0);
}

// A negative mean: the original's signed mean takes the threshold below zero and every entry
// passes; the paper's |μ| does not.
TEST(OriginalSelectors, GaussianGksgdUsesTheSignedMean) {
  const std::vector<float> x = normal(50000, -5.0, 1.0, 7);
  const std::size_t k = 50;
  SparseSet original, paper;
  GksgdGaussianSelector().select(x, k, 0.001, original);
  GaussianSelector().select(x, k, 0.001, paper);
  EXPECT_EQ(original.size(), x.size());
  EXPECT_LT(paper.size(), x.size() / 10);
}

TEST(OriginalSelectors, DgcGksgdSendsExactlyK) {
  GksgdDgcSelector dgc;
  TopkSelector exact;
  SparseSet out, top;
  for (const std::size_t d : {100000u, 1234567u}) {
    const std::vector<float> x = normal(d, 0.0, 1.0, static_cast<unsigned>(d));
    const std::size_t k = d / 1000;
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      dgc.select(x, k, seed, out);
      EXPECT_EQ(out.size(), k) << d;
      exact.select(x, k, top);
      EXPECT_EQ(out.indices, top.indices);  // the candidates hold x's top-k
    }
  }
}

// When k outgrows the 1% sample (the original's torch.topk fails there), the exact top-k.
TEST(OriginalSelectors, DgcGksgdWithKBeyondTheSampleIsTheExactTopK) {
  const std::vector<float> x = normal(10000, 0.0, 1.0, 11);
  SparseSet out, top;
  GksgdDgcSelector().select(x, 150, 1, out);  // sample of 100 < k
  TopkSelector().select(x, 150, top);
  EXPECT_EQ(out.indices, top.indices);
}

// compression.py:429-448, transcribed.
std::vector<std::uint32_t> redsync_reference(const std::vector<float>& x, std::size_t k,
                                             int* probes) {
  double sum = 0;
  float max = 0;
  for (const float v : x) {
    sum += std::abs(v);
    max = std::max(max, std::abs(v));
  }
  const float mean = static_cast<float>(sum / static_cast<double>(x.size()));
  double l = 0.0, r = 1.0;
  const double eps = 0.2;
  std::vector<std::uint32_t> idx;
  *probes = 0;
  while (r - l > eps) {
    const double m = l + (r - l) / 2;
    const float thr = mean + static_cast<float>(m) * (max - mean);
    idx = passing(x, thr);
    ++*probes;
    const double n = static_cast<double>(idx.size());
    const double kk = static_cast<double>(k);
    if (n > kk && 2 * kk > n) break;
    if (n < kk / 2) {
      r = m;
    } else {
      l = m;
    }
  }
  return idx;
}

TEST(OriginalSelectors, RedsyncIsTheOriginalsBisection) {
  RedsyncSelector redsync;
  SparseSet out;
  int most_probes = 0;
  for (const unsigned seed : {1u, 2u, 3u, 4u}) {
    for (const auto& x : {normal(100000, 0.0, 1.0, seed), laplace(100000, seed)}) {
      for (const std::size_t k : {10u, 100u, 1000u, 20000u}) {
        int probes = 0;
        const std::vector<std::uint32_t> expected = redsync_reference(x, k, &probes);
        redsync.select(x, k, out);
        ASSERT_EQ(out.indices, expected) << seed << " " << k;
        most_probes = std::max(most_probes, probes);
      }
    }
  }
  EXPECT_EQ(most_probes, 3);  // the interval shrinks 1, 0.5, 0.25, 0.125: never a fourth
}

}  // namespace
}  // namespace commsgd::kernels

namespace commsgd::algorithms {
namespace {

// --selector random-independent draws on each rank its own indices (the GaussianK-SGD code's
// unseeded torch.randperm), where --selector random draws the same everywhere.
TEST(OriginalSelectors, RandomIndependentDiffersByRank) {
  const std::vector<float> acc = kernels::normal(10000, 0.0, 1.0, 5);
  const auto indices = [&](const std::string& name, int rank, std::uint64_t iteration) {
    kernels::SparseSet out;
    AlgorithmConfig config;
    config.selector = name;
    config.seed = 42;
    make_selector(config, rank)->select(acc, 100, 0.01, iteration, out);
    EXPECT_EQ(out.size(), 100u);
    return out.indices;
  };
  EXPECT_EQ(indices("random", 0, 3), indices("random", 1, 3));
  EXPECT_NE(indices("random-independent", 0, 3), indices("random-independent", 1, 3));
  EXPECT_NE(indices("random-independent", 0, 3), indices("random-independent", 0, 4));
  EXPECT_EQ(indices("random-independent", 2, 3), indices("random-independent", 2, 3));
}

// Every row of the selector table builds and selects from a gradient.
TEST(OriginalSelectors, EveryTableRowSelects) {
  const std::vector<float> acc = kernels::normal(20000, 0.0, 1.0, 9);
  for (const SelectorRow& row : selector_table()) {
    kernels::SparseSet out;
    row.make(AlgorithmConfig{}, 0)->select(acc, 20, 0.001, 0, out);
    EXPECT_GT(out.size(), 0u) << row.name;
    EXPECT_TRUE(std::is_sorted(out.indices.begin(), out.indices.end())) << row.name;
  }
}

}  // namespace
}  // namespace commsgd::algorithms
