#include "trainer/model_table.hpp"

#include <array>

#include "trainer/options.hpp"

namespace commsgd::trainer {
namespace {

// The options only some models take, as each row lists them.
constexpr std::array<std::string_view, 3> kResNetOptions = {"--zero-init-residual", "--fc-init-std",
                                                            "--uniform-fan-out-init"};
constexpr std::array<std::string_view, 2> kLanguageModelOptions = {"--eval-reset-state",
                                                                   "--eval-windows"};
constexpr std::array<std::string_view, 1> kFileOptions = {"--model-file"};

}  // namespace

const algorithms::ExtensionTable<ModelRow>& model_table() {
  static const algorithms::ExtensionTable<ModelRow> table(
      "--model", "model",
      {
          {.name = "mlp",
           .summary = "fully connected, ReLU between layers (--mlp-hidden)",
           .input = ModelInput::features},
          {.name = "lenet", .summary = "LeNet-5 with same padding", .min_side = 4},
          {.name = "resnet20",
           .summary = "CIFAR ResNet-20 (He et al. 2016), 0.27M parameters",
           .min_side = 4,
           .own_options = kResNetOptions},
          {.name = "resnet32",
           .summary = "CIFAR ResNet-32, 0.46M parameters",
           .min_side = 4,
           .own_options = kResNetOptions},
          {.name = "resnet56",
           .summary = "CIFAR ResNet-56, 0.85M parameters",
           .min_side = 4,
           .own_options = kResNetOptions},
          {.name = "vgg16",
           .summary = "VGG-16 with batch norm, CIFAR variant, 14.7M parameters",
           .min_side = 32},
          {.name = "resnet50",
           .summary = "torchvision's ResNet-50 (ImageNet), 25.6M parameters",
           .min_side = 32,
           .own_options = kResNetOptions},
          // The smallest side its three max-pools leave at least 1×1.
          {.name = "alexnet",
           .summary = "torchvision's AlexNet (ImageNet), 61.1M parameters",
           .min_side = 63},
          {.name = "lstm",
           .summary = "word-level LSTM language model (--lstm-*), for --dataset ptb",
           .input = ModelInput::tokens,
           .own_options = kLanguageModelOptions},
          {.name = "torchscript",
           .summary = "your own network: a module saved with torch.jit.save (--model-file; "
                      "tools/export_torchscript.py)",
           .from_file = true,
           .own_options = kFileOptions},
      });
  return table;
}

const ModelRow& find_model(std::string_view name) {
  return model_table().find(name);
}

}  // namespace commsgd::trainer
