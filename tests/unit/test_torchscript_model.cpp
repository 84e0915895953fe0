// --model torchscript against the built-in models: a module exported from Python by
// tools/export_torchscript.py (Debian's python3-torch) is the same network as its C++ twin.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/torchscript_files.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/models.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {
namespace {

namespace fs = std::filesystem;

std::int64_t numel_of(const std::vector<torch::Tensor>& tensors) {
  std::int64_t n = 0;
  for (const auto& t : tensors) n += t.numel();
  return n;
}

class TorchScriptModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("commsgd_torchscript_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TorchScriptModel, ExportedResNet20IsTheBuiltInOne) {
  const fs::path file = dir_ / "resnet20.pt";
  testing::export_torchscript("resnet20", file, {"--channels", "3", "--classes", "10"});
  const auto built_in = make_model({"resnet20", 3, 32, 32, 10, {}, {}, {}, {}});
  const auto loaded = make_model({"torchscript", 3, 32, 32, 10, {}, {}, {}, file.string()});
  EXPECT_EQ(numel_of(loaded->parameters()), numel_of(built_in->parameters()));
  EXPECT_EQ(numel_of(loaded->parameters()), 269722);
  // Batch-norm statistics are the model's buffers, as the built-in's (the counters of batches
  // seen are integers, which FlatParameters leaves out).
  EXPECT_EQ(loaded->buffers().size(), built_in->buffers().size());
  EXPECT_EQ(numel_of(loaded->buffers()), numel_of(built_in->buffers()));
  const torch::Tensor logits = loaded->forward(torch::randn({4, 3, 32, 32}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{4, 10}));
}

// FlatParameters moves the parameters into its buffer; the loaded module must compute with
// them there: a change to the flat buffer changes its output, and backward fills the flat
// gradient.
TEST_F(TorchScriptModel, TheModuleReadsAndWritesTheFlatBuffers) {
  const fs::path file = dir_ / "cnn.pt";
  testing::export_torchscript("small-cnn", file,
                              {"--channels", "1", "--height", "8", "--width", "8"});
  const auto model = make_model({"torchscript", 1, 8, 8, 10, {}, {}, {}, file.string()});
  FlatParameters flat(*model);
  const torch::Tensor x = torch::randn({3, 1, 8, 8});
  const torch::Tensor before = model->forward(x).detach().clone();
  for (float& p : flat.params().host("the test")) p *= 0.5f;
  EXPECT_FALSE(torch::allclose(model->forward(x), before));
  flat.zero_grads();
  model->forward(x).sum().backward();
  flat.check_grads_in_place();
  double gradient = 0;
  for (const float g : flat.grads().host("the test")) gradient += std::abs(g);
  EXPECT_GT(gradient, 0.0);
}

TEST_F(TorchScriptModel, TrainAndEvalModesReachTheModule) {
  const fs::path file = dir_ / "resnet20.pt";
  testing::export_torchscript("resnet20", file, {"--channels", "3", "--classes", "10"});
  const auto model = make_model({"torchscript", 3, 8, 8, 10, {}, {}, {}, file.string()});
  const torch::Tensor x = torch::randn({4, 3, 8, 8});
  model->eval();
  const torch::Tensor a = model->forward(x), b = model->forward(x);
  EXPECT_TRUE(torch::equal(a, b)) << "eval mode: running statistics, no update";
  model->train();
  const torch::Tensor running_mean = model->buffers()[0].clone();
  model->forward(x);
  EXPECT_FALSE(torch::equal(model->buffers()[0], running_mean)) << "train mode updates them";
}

}  // namespace
}  // namespace commsgd::trainer
