#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/distribution.hpp"
#include "kernels/sgd.hpp"
#include "kernels/topk.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::kernels {
namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// torch.optim.SGD's documented update, in double, one coordinate at a time.
void reference_step(std::vector<double>& p, const std::vector<float>& g, std::vector<double>& buf,
                    const SgdHyperParams& hp, bool first_step) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    double d = g[i] + hp.weight_decay * p[i];
    if (hp.momentum != 0) {
      buf[i] = first_step ? d : hp.momentum * buf[i] + d;
      d = hp.nesterov ? d + hp.momentum * buf[i] : buf[i];
    }
    p[i] -= hp.lr * d;
  }
}

class SgdStep : public ::testing::TestWithParam<SgdHyperParams> {};

TEST_P(SgdStep, MatchesTorchSgdArithmeticOverSeveralSteps) {
  const SgdHyperParams hp = GetParam();
  const std::size_t n = 1003;  // not a multiple of any vector width
  std::vector<float> params = random_vector(n, 1), momentum(n, 0.0f);
  std::vector<double> ref_params(params.begin(), params.end()), ref_buf(n, 0.0);
  for (int step = 0; step < 5; ++step) {
    const std::vector<float> grads = random_vector(n, 100 + step);
    sgd_step(params, grads, momentum, hp);
    reference_step(ref_params, grads, ref_buf, hp, step == 0);
  }
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(params[i], ref_params[i], 1e-5 * (1 + std::abs(ref_params[i]))) << "entry " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, SgdStep,
                         ::testing::Values(SgdHyperParams{0.1f, 0.0f, 0.0f, false},
                                           SgdHyperParams{0.1f, 0.9f, 1e-4f, false},
                                           SgdHyperParams{0.05f, 0.9f, 5e-4f, true}));

TEST(SgdStepTest, RejectsMismatchedSizes) {
  std::vector<float> p(4), g(3), b(4);
  EXPECT_THROW(sgd_step(p, g, b, {}), std::invalid_argument);
}

TEST(VectorOps, ScaleAndSquaredNorm) {
  std::vector<float> x = {3.0f, -4.0f, 0.5f};
  EXPECT_DOUBLE_EQ(squared_norm(x), 25.25);
  scale(x, 2.0f);
  EXPECT_EQ(x, (std::vector<float>{6.0f, -8.0f, 1.0f}));
  EXPECT_DOUBLE_EQ(squared_norm(std::vector<float>{}), 0.0);
}

TEST(Distribution, LeftOutEnergyOfASelection) {
  const std::vector<float> x = {3, 0, -4, 0};  // ‖x‖² = 25
  const std::vector<std::uint32_t> none, first = {0}, both = {0, 2};
  EXPECT_DOUBLE_EQ(left_out_energy(x, none), 1.0);
  EXPECT_DOUBLE_EQ(left_out_energy(x, first), 16.0 / 25.0);
  EXPECT_DOUBLE_EQ(left_out_energy(x, both), 0.0);
  EXPECT_DOUBLE_EQ(left_out_energy(std::vector<float>(4, 0.0f), first), 0.0);
  const std::vector<std::uint32_t> outside = {4};
  EXPECT_THROW(left_out_energy(x, outside), std::invalid_argument);
}

// The study's point: for bell-shaped values, Top-k leaves out much less than the 1 − k/d that a
// worst case (all entries equal) would, because the largest k carry far more than k/d of the
// energy. For N(0,1) with k/d = 1%, the top 1% hold about 9% of it.
TEST(Distribution, TopKOfGaussianValuesBeatsTheLinearBound) {
  const std::vector<float> x = random_vector(100000, 5);
  const std::size_t k = 1000;
  SparseSet top;
  TopkSelector().select(x, k, top);
  const double contraction = left_out_energy(x, top.indices);
  EXPECT_LT(contraction, 1.0 - 0.01);
  EXPECT_NEAR(contraction, 0.91, 0.01);
}

TEST(Distribution, HistogramCountsEveryValueOnce) {
  const std::vector<float> x = {-2.0f, -1.0f, -0.5f, 0.0f, 0.49f, 0.5f, 1.0f, 3.0f};
  const Histogram h = histogram(x, -1.0, 1.0, 4);  // bins of 0.5 from -1
  EXPECT_EQ(h.below, 1u);
  EXPECT_EQ(h.above, 2u);  // 1.0 is the upper edge, outside
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 1, 2, 1}));
  EXPECT_THROW(histogram(x, 1.0, 1.0, 4), std::invalid_argument);
  EXPECT_THROW(histogram(x, 0.0, 1.0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::kernels
