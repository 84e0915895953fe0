#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "kernels/sgd.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/models.hpp"

namespace commsgd::trainer {
namespace {

std::shared_ptr<Model> lenet(std::uint64_t seed) {
  torch::manual_seed(seed);
  return make_model({"lenet", 1, 8, 8, 10, {}, {}});
}

torch::Tensor concat_grads(Model& m) {
  std::vector<torch::Tensor> g;
  for (const auto& p : m.parameters()) g.push_back(p.grad().flatten());
  return torch::cat(g);
}

torch::Tensor concat_params(Model& m) {
  std::vector<torch::Tensor> v;
  for (const auto& p : m.parameters()) v.push_back(p.detach().flatten());
  return torch::cat(v);
}

torch::Tensor as_tensor(std::span<float> s) {
  return torch::from_blob(s.data(), {static_cast<std::int64_t>(s.size())});
}

// Training through the flat buffers (our SGD kernel on one span) must follow exactly the
// trajectory of LibTorch's own per-tensor SGD on an identical, unflattened model.
TEST(FlatParameters, FlatTrainingMatchesTorchSgd) {
  auto flat_model = lenet(3), torch_model = lenet(3);
  FlatParameters flat(*flat_model);
  ASSERT_TRUE(torch::equal(as_tensor(flat.params()), concat_params(*torch_model)));

  torch::optim::SGD optimizer(
      torch_model->parameters(),
      torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4).nesterov(true));
  std::vector<float> momentum(flat.params().size(), 0.0f);
  const kernels::SgdHyperParams hp{0.05f, 0.9f, 1e-4f, true};

  torch::manual_seed(11);
  for (int step = 0; step < 4; ++step) {
    const torch::Tensor x = torch::randn({16, 1, 8, 8});
    const torch::Tensor y = torch::randint(0, 10, {16}, torch::kInt64);

    flat.zero_grads();
    torch::nn::functional::cross_entropy(flat_model->forward(x), y).backward();
    flat.check_grads_in_place();

    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(torch_model->forward(x), y).backward();
    ASSERT_TRUE(torch::allclose(as_tensor(flat.grads()), concat_grads(*torch_model), 1e-5, 1e-7))
        << "step " << step;

    kernels::sgd_step(flat.params(), flat.grads(), momentum, hp);
    optimizer.step();
    ASSERT_TRUE(torch::allclose(as_tensor(flat.params()), concat_params(*torch_model), 1e-5, 1e-7))
        << "step " << step;
  }
}

TEST(FlatParameters, BatchNormStatisticsLiveInTheBufferSpan) {
  torch::manual_seed(1);
  auto model = make_model({"resnet20", 3, 8, 8, 10, {}, {}});
  FlatParameters flat(*model);
  ASSERT_GT(flat.buffers().size(), 0u);
  const std::vector<float> before(flat.buffers().begin(), flat.buffers().end());
  model->train();
  model->forward(torch::randn({4, 3, 8, 8}));
  const std::vector<float> after(flat.buffers().begin(), flat.buffers().end());
  EXPECT_NE(before, after) << "a training forward pass updates running statistics in place";
}

}  // namespace
}  // namespace commsgd::trainer
