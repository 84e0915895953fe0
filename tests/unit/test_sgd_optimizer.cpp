// The trainer's optimizer (trainer/sgd_optimizer.hpp) on host buffers: torch.optim.SGD's update
// computed by hand, weight decay only on the stretches that take it, clipping to the norm, and a
// non-finite gradient leaving everything as it was.
#include "trainer/sgd_optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace commsgd::trainer {
namespace {

using kernels::Buffer;

struct Model {
  std::vector<float> params, grads, momentum;
  bool step(const SgdOptimizer& optimizer, double lr) {
    return optimizer.step(Buffer<float>(params), Buffer<float>(grads), Buffer<float>(momentum),
                          lr);
  }
};

// Two steps of torch.optim.SGD (dampening 0) on one parameter, as its documentation writes it.
float two_torch_steps(float p, float g1, float g2, float lr, float mu, float wd, bool nesterov) {
  float buf = 0;
  for (const float g : {g1, g2}) {
    const float d = g + wd * p;
    buf = mu * buf + d;
    p -= lr * (nesterov ? d + mu * buf : buf);
  }
  return p;
}

TEST(SgdOptimizer, StepsAsTorchOptimSgdDoes) {
  for (const bool nesterov : {false, true}) {
    const SgdOptimizer optimizer({.momentum = 0.9, .weight_decay = 0.01, .nesterov = nesterov},
                                 {{0, 2, true}});
    Model m{{1.0f, -2.0f}, {0.5f, 0.25f}, {0.0f, 0.0f}};
    ASSERT_TRUE(m.step(optimizer, 0.1));
    m.grads = {-0.5f, 1.0f};
    ASSERT_TRUE(m.step(optimizer, 0.1));
    EXPECT_FLOAT_EQ(m.params[0], two_torch_steps(1.0f, 0.5f, -0.5f, 0.1f, 0.9f, 0.01f, nesterov));
    EXPECT_FLOAT_EQ(m.params[1], two_torch_steps(-2.0f, 0.25f, 1.0f, 0.1f, 0.9f, 0.01f, nesterov));
  }
}

TEST(SgdOptimizer, WeightDecayOnlyWhereAStretchTakesIt) {
  // Zero gradients: only weight decay moves a parameter.
  const SgdOptimizer optimizer({.weight_decay = 0.5}, {{0, 1, true}, {1, 2, false}, {3, 1, true}});
  Model m{{2.0f, 2.0f, 2.0f, 2.0f}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  ASSERT_TRUE(m.step(optimizer, 0.1));
  const std::vector<float> expected = {1.9f, 2.0f, 2.0f, 1.9f};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(m.params[i], expected[i]) << i;
}

TEST(SgdOptimizer, ClipsALongGradientToTheNormAndLeavesAShortOne) {
  const SgdOptimizer optimizer({.clip_grad_norm = 1.0}, {{0, 2, true}});
  Model long_gradient{{0, 0}, {3.0f, 4.0f}, {0, 0}};
  ASSERT_TRUE(long_gradient.step(optimizer, 1.0));
  EXPECT_FLOAT_EQ(long_gradient.grads[0], 0.6f);
  EXPECT_FLOAT_EQ(long_gradient.grads[1], 0.8f);
  EXPECT_FLOAT_EQ(long_gradient.params[0], -0.6f);
  Model short_gradient{{0, 0}, {0.3f, 0.4f}, {0, 0}};
  ASSERT_TRUE(short_gradient.step(optimizer, 1.0));
  EXPECT_EQ(short_gradient.grads, (std::vector<float>{0.3f, 0.4f}));
}

TEST(SgdOptimizer, ANonFiniteGradientChangesNothing) {
  const SgdOptimizer optimizer({.momentum = 0.9, .clip_grad_norm = 1.0}, {{0, 2, true}});
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity()}) {
    Model m{{1.0f, 2.0f}, {bad, 1.0f}, {0.5f, 0.5f}};
    EXPECT_FALSE(m.step(optimizer, 0.1));
    EXPECT_EQ(m.params, (std::vector<float>{1.0f, 2.0f}));
    EXPECT_EQ(m.momentum, (std::vector<float>{0.5f, 0.5f}));
    EXPECT_EQ(m.grads[1], 1.0f);
  }
}

}  // namespace
}  // namespace commsgd::trainer
