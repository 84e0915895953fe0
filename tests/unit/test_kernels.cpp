#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/sgd.hpp"
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

}  // namespace
}  // namespace commsgd::kernels
