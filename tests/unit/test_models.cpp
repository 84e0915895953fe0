#include <gtest/gtest.h>

#include "trainer/models.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {
namespace {

std::int64_t parameter_count(Model& m) {
  std::int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

struct ModelCase {
  std::string name;
  int channels, side;
  std::int64_t parameters;  // published sizes for 10 classes (He et al. 2016: 0.27M, 0.46M, 0.85M)
};

class Models : public ::testing::TestWithParam<ModelCase> {};

TEST_P(Models, ShapeAndSize) {
  const ModelCase c = GetParam();
  auto model = make_model({c.name, c.channels, c.side, c.side, 10, {128}});
  EXPECT_EQ(parameter_count(*model), c.parameters);
  const torch::Tensor logits = model->forward(torch::randn({2, c.channels, c.side, c.side}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 10}));
}

INSTANTIATE_TEST_SUITE_P(
    All, Models,
    ::testing::Values(ModelCase{"mlp", 1, 8, 64 * 128 + 128 + 128 * 10 + 10},
                      ModelCase{"lenet", 1, 28,
                                156 + 2416 + (16 * 7 * 7 * 120 + 120) + 10164 + 850},
                      ModelCase{"resnet20", 3, 32, 269722}, ModelCase{"resnet32", 3, 32, 464154},
                      ModelCase{"resnet56", 3, 32, 853018}, ModelCase{"vgg16", 3, 32, 14728266},
                      // torchvision's sizes (25,557,032 and 61,100,840 with 1000 classes) with
                      // the last layer cut to 10 classes.
                      ModelCase{"resnet50", 3, 224, 25557032 - (2048 * 990 + 990)},
                      ModelCase{"alexnet", 3, 224, 61100840 - (4096 * 990 + 990)}),
    [](const auto& info) { return info.param.name; });

TEST(ModelsTest, TooSmallInputIsAUsageError) {
  EXPECT_THROW(make_model({"vgg16", 1, 8, 8, 10, {}}), UsageError);
  EXPECT_THROW(make_model({"alexnet", 3, 32, 32, 10, {}}), UsageError);
  EXPECT_NO_THROW(
      make_model({"alexnet", 3, 63, 63, 10, {}})->forward(torch::randn({1, 3, 63, 63})));
}

}  // namespace
}  // namespace commsgd::trainer
