#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/support/torchscript_files.hpp"
#include "trainer/model_table.hpp"
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
  auto model = make_model({c.name, c.channels, c.side, c.side, 10, {128}, {}, {}, {}});
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

// Every row of the model table builds at the smallest input it takes, and maps a batch to logits.
TEST(ModelsTest, EveryTableRowBuilds) {
  for (const ModelRow& row : model_table()) {
    const int side = std::max(row.min_side, 8);
    ModelSpec spec{std::string(row.name), 3, side, side, 10, {16}, {}, {}, {}};
    spec.lstm = {.hidden = 8, .layers = 1, .dropout = 0, .tied = true};
    if (row.from_file) {
      spec.file = (std::filesystem::temp_directory_path() /
                   ("commsgd_every_row_" + std::to_string(getpid()) + ".pt"))
                      .string();
      const std::string s = std::to_string(side);
      testing::export_torchscript("small-cnn", spec.file,
                                  {"--channels", "3", "--height", s, "--width", s});
    }
    const auto model = make_model(spec);
    if (row.from_file) std::filesystem::remove(spec.file);
    const torch::Tensor input = row.input == ModelInput::tokens
                                    ? torch::randint(0, 10, {4, 2}, torch::kInt64)
                                    : torch::randn({2, 3, side, side});
    const torch::Tensor logits = model->forward(input);
    EXPECT_EQ(logits.size(-1), 10) << row.name;
  }
  EXPECT_THROW(make_model({"resnet18", 3, 32, 32, 10, {}, {}, {}, {}}), algorithms::UnknownName);
}

TEST(ModelsTest, TooSmallInputIsAUsageError) {
  EXPECT_THROW(make_model({"vgg16", 1, 8, 8, 10, {}, {}, {}, {}}), UsageError);
  EXPECT_THROW(make_model({"alexnet", 3, 32, 32, 10, {}, {}, {}, {}}), UsageError);
  EXPECT_NO_THROW(make_model({"alexnet", 3, 63, 63, 10, {}, {}, {}, {}})
                      ->forward(torch::randn({1, 3, 63, 63})));
}

// --zero-init-residual --fc-init-std 0.01, the SGP code's ResNet-50 (gossip_sgd.py, init_model):
// every bottleneck's bn3 scale starts at 0 (and only those: the stem's and the shortcuts' stay
// at 1), the classifier's weights are N(0, 0.01²), and the convolutions are as without them.
TEST(ModelsTest, SgpResNet50Initialisation) {
  ModelSpec spec{"resnet50", 3, 32, 32, 1000, {}, {}, {}, {}};
  torch::manual_seed(5);
  const auto plain = make_model(spec);
  spec.resnet_init = {.zero_residual = true, .fc_std = 0.01};
  torch::manual_seed(5);
  const auto sgp = make_model(spec);
  int zeroed = 0, kept = 0;
  for (const auto& item : sgp->named_parameters()) {
    const std::string& name = item.key();
    const torch::Tensor& p = item.value();
    if (name.ends_with("bn3.weight")) {
      EXPECT_EQ(p.abs().max().item<float>(), 0.0f) << name;
      ++zeroed;
    } else if (name.ends_with(".weight") && p.dim() == 1) {
      EXPECT_EQ(p.min().item<float>(), 1.0f) << name;
      ++kept;
    }
  }
  EXPECT_EQ(zeroed, 3 + 4 + 6 + 3);  // one per bottleneck block
  EXPECT_GT(kept, zeroed);
  const torch::Tensor fc = sgp->named_parameters()["fc.weight"];
  EXPECT_NEAR(fc.std().item<double>(), 0.01, 0.0005);
  EXPECT_NEAR(fc.mean().item<double>(), 0.0, 0.0005);
  EXPECT_GT(plain->named_parameters()["fc.weight"].std().item<double>(), 0.012);
  EXPECT_TRUE(torch::equal(plain->named_parameters()["conv.weight"],
                           sgp->named_parameters()["conv.weight"]));
}

// --uniform-fan-out-init, GaussianK-SGD's CIFAR ResNet (models/resnet.py:72-84): every
// convolution's weights lie within ±1/√(9·out_channels) and fill that range (a uniform of that
// width has standard deviation bound/√3); the classifier is He normal over its 64 inputs with a
// zero bias; batch norm starts at 1 and 0 as before.
TEST(ModelsTest, GaussiankResNet20Initialisation) {
  ModelSpec spec{"resnet20", 3, 32, 32, 10, {}, {}, {}, {}};
  spec.resnet_init.uniform_fan_out = true;
  torch::manual_seed(11);
  const auto model = make_model(spec);
  int convolutions = 0;
  for (const auto& item : model->named_parameters()) {
    const torch::Tensor& p = item.value();
    if (p.dim() != 4) continue;
    ++convolutions;
    const double bound = 1.0 / std::sqrt(9.0 * static_cast<double>(p.size(0)));
    EXPECT_LE(p.abs().max().item<double>(), bound) << item.key();
    EXPECT_GT(p.abs().max().item<double>(), 0.98 * bound) << item.key();
    EXPECT_NEAR(p.std().item<double>(), bound / std::sqrt(3.0), 0.1 * bound) << item.key();
    EXPECT_NEAR(p.mean().item<double>(), 0.0, 0.1 * bound) << item.key();
  }
  EXPECT_EQ(convolutions, 19);  // the stem and two per block; option-A shortcuts have none
  const auto parameters = model->named_parameters();
  EXPECT_EQ(parameters["fc.bias"].abs().max().item<float>(), 0.0F);
  EXPECT_NEAR(parameters["fc.weight"].std().item<double>(), std::sqrt(2.0 / 64.0), 0.03);
  EXPECT_EQ(parameters["bn.weight"].min().item<float>(), 1.0F);
}

ModelSpec lstm_spec(bool tied) {
  ModelSpec spec{"lstm", 1, 1, 1, 50, {}, {}, {}, {}};
  spec.lstm = {.hidden = 16, .layers = 2, .dropout = 0.5, .tied = tied};
  return spec;
}

TEST(LstmLanguageModel, SizeTiedAndUntied) {
  // Embedding 50×16; per LSTM layer 4·(16·16 + 16·16 + 16 + 16); the output layer's bias, and
  // untied its own 16×50 matrix.
  const std::int64_t lstm = 2 * 4 * (16 * 16 * 2 + 32);
  EXPECT_EQ(parameter_count(*make_model(lstm_spec(true))), 50 * 16 + lstm + 50);
  EXPECT_EQ(parameter_count(*make_model(lstm_spec(false))), 50 * 16 + lstm + 50 + 16 * 50);
}

TEST(LstmLanguageModel, CarriesItsStateAcrossBatchesAndHandsItOut) {
  torch::manual_seed(3);
  auto model = make_model(lstm_spec(true));
  model->eval();  // no dropout: outputs depend on the state alone
  const torch::Tensor first = torch::randint(0, 50, {5, 3}, torch::kInt64);
  const torch::Tensor second = torch::randint(0, 50, {5, 3}, torch::kInt64);
  const torch::Tensor fresh = model->forward(second);
  EXPECT_EQ(fresh.sizes(), (std::vector<std::int64_t>{15, 50}));  // one row per token

  model->reset_state();
  model->forward(first);
  const std::vector<float> state = model->state();
  EXPECT_EQ(state.size(), 2U * 2 * 3 * 16);  // h and c, [layers, streams, hidden]
  const torch::Tensor carried = model->forward(second);
  EXPECT_FALSE(torch::allclose(carried, fresh));

  model->set_state(state);
  EXPECT_TRUE(torch::equal(model->forward(second), carried));
  model->reset_state();
  EXPECT_TRUE(model->state().empty());
  EXPECT_TRUE(torch::equal(model->forward(second), fresh));
}

TEST(LstmLanguageModel, TiedOutputTrainsTheEmbedding) {
  torch::manual_seed(4);
  auto model = make_model(lstm_spec(true));
  const torch::Tensor tokens = torch::randint(0, 50, {4, 2}, torch::kInt64);
  model->forward(tokens).sum().backward();
  const torch::Tensor embedding_grad = model->named_parameters()["embedding.weight"].grad();
  // Rows of tokens never fed in get gradient only through the output layer.
  const torch::Tensor unused =
      torch::ones({50}, torch::kBool).index_put_({tokens.flatten()}, false);
  EXPECT_GT(embedding_grad.index({unused}).abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace commsgd::trainer
