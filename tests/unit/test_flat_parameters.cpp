#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "kernels/sgd.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/models.hpp"

namespace commsgd::trainer {
namespace {

// The flat buffers of a host model (or its host copies), as spans.
std::span<float> host(kernels::Buffer<float> b) {
  return b.host("the test");
}

std::shared_ptr<Model> lenet(std::uint64_t seed) {
  torch::manual_seed(seed);
  return make_model({"lenet", 1, 8, 8, 10, {}, {}, {}, {}});
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
  ASSERT_TRUE(torch::equal(as_tensor(host(flat.params())), concat_params(*torch_model)));

  torch::optim::SGD optimizer(
      torch_model->parameters(),
      torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4).nesterov(true));
  std::vector<float> momentum(host(flat.params()).size(), 0.0f);
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
    ASSERT_TRUE(
        torch::allclose(as_tensor(host(flat.grads())), concat_grads(*torch_model), 1e-5, 1e-7))
        << "step " << step;

    kernels::sgd_step(host(flat.params()), host(flat.grads()), momentum, hp);
    optimizer.step();
    ASSERT_TRUE(
        torch::allclose(as_tensor(host(flat.params())), concat_params(*torch_model), 1e-5, 1e-7))
        << "step " << step;
  }
}

TEST(FlatParameters, BatchNormStatisticsLiveInTheBufferSpan) {
  torch::manual_seed(1);
  auto model = make_model({"resnet20", 3, 8, 8, 10, {}, {}, {}, {}});
  FlatParameters flat(*model);
  ASSERT_GT(host(flat.buffers()).size(), 0u);
  const std::vector<float> before(host(flat.buffers()).begin(), host(flat.buffers()).end());
  model->train();
  model->forward(torch::randn({4, 3, 8, 8}));
  const std::vector<float> after(host(flat.buffers()).begin(), host(flat.buffers()).end());
  EXPECT_NE(before, after) << "a training forward pass updates running statistics in place";
}

// With staging (what a GPU model gets; forced here on the CPU), the host copies must follow the
// same trajectory, bit for bit, when the steps move them across as the trainer does, and must
// really be copies: the model does not see a host update before params_to_device().
TEST(FlatParameters, StagedTrainingMatchesInPlaceTraining) {
  auto in_place_model = lenet(3), staged_model = lenet(3);
  FlatParameters in_place(*in_place_model);
  FlatParameters staged(*staged_model, FlatParameters::Staging::always);
  ASSERT_FALSE(in_place.staged());
  ASSERT_TRUE(staged.staged());
  std::vector<float> momentum_a(host(in_place.params()).size(), 0.0f), momentum_b = momentum_a;
  const kernels::SgdHyperParams hp{0.05f, 0.9f, 1e-4f, true};

  torch::manual_seed(11);
  for (int step = 0; step < 4; ++step) {
    const torch::Tensor x = torch::randn({16, 1, 8, 8});
    const torch::Tensor y = torch::randint(0, 10, {16}, torch::kInt64);

    in_place.zero_grads();
    torch::nn::functional::cross_entropy(in_place_model->forward(x), y).backward();
    kernels::sgd_step(host(in_place.params()), host(in_place.grads()), momentum_a, hp);

    staged.zero_grads();
    staged.params_to_device();
    torch::nn::functional::cross_entropy(staged_model->forward(x), y).backward();
    staged.check_grads_in_place();
    EXPECT_TRUE(torch::all(as_tensor(host(staged.grads())) == 0).item<bool>())
        << "not yet downloaded";
    staged.grads_to_host();
    ASSERT_TRUE(torch::equal(as_tensor(host(staged.grads())), concat_grads(*staged_model)));
    kernels::sgd_step(host(staged.params()), host(staged.grads()), momentum_b, hp);
    EXPECT_FALSE(torch::equal(as_tensor(host(staged.params())), concat_params(*staged_model)))
        << "the model sees a host update only once it is uploaded";

    ASSERT_TRUE(torch::equal(as_tensor(host(staged.params())), as_tensor(host(in_place.params()))))
        << "step " << step;
  }
}

TEST(FlatParameters, StagedGradientHooksHandOutDownloadedGradients) {
  auto model = lenet(5);
  FlatParameters flat(*model, FlatParameters::Staging::always);
  std::vector<float> seen(host(flat.grads()).size(), 0.0f);
  flat.on_gradient_ready([&](std::size_t offset, std::size_t count) {
    const std::span<float> ready = host(flat.grads()).subspan(offset, count);
    std::copy(ready.begin(), ready.end(), seen.begin() + static_cast<std::ptrdiff_t>(offset));
  });
  flat.zero_grads();
  torch::nn::functional::cross_entropy(model->forward(torch::randn({8, 1, 8, 8})),
                                       torch::randint(0, 10, {8}, torch::kInt64))
      .backward();
  EXPECT_TRUE(torch::equal(as_tensor(seen), concat_grads(*model)));
  EXPECT_TRUE(torch::any(as_tensor(seen) != 0).item<bool>());
}

TEST(FlatParameters, StagedBuffersMoveOnlyWhenAsked) {
  torch::manual_seed(1);
  auto model = make_model({"resnet20", 3, 8, 8, 10, {}, {}, {}, {}});
  FlatParameters flat(*model, FlatParameters::Staging::always);
  const std::vector<float> before(host(flat.buffers()).begin(), host(flat.buffers()).end());
  model->train();
  model->forward(torch::randn({4, 3, 8, 8}));
  EXPECT_EQ(std::vector<float>(host(flat.buffers()).begin(), host(flat.buffers()).end()), before);
  flat.buffers_to_host();
  EXPECT_NE(std::vector<float>(host(flat.buffers()).begin(), host(flat.buffers()).end()), before);

  std::copy(before.begin(), before.end(), host(flat.buffers()).begin());
  flat.buffers_to_device();
  std::vector<torch::Tensor> device_buffers;
  for (const torch::Tensor& b : model->buffers()) {
    if (b.scalar_type() == torch::kFloat32) device_buffers.push_back(b.flatten());
  }
  EXPECT_TRUE(torch::equal(torch::cat(device_buffers), as_tensor(host(flat.buffers()))));
}

}  // namespace
}  // namespace commsgd::trainer
