#include "trainer/model_table.hpp"

#include "trainer/options.hpp"

namespace commsgd::trainer {

const algorithms::ExtensionTable<ModelRow>& model_table() {
  static const algorithms::ExtensionTable<ModelRow> table(
      "--model", "model",
      {
          {"mlp", "fully connected, ReLU between layers (--mlp-hidden)", ModelInput::features},
          {"lenet", "LeNet-5 with same padding", ModelInput::images, 4},
          {"resnet20", "CIFAR ResNet-20 (He et al. 2016), 0.27M parameters", ModelInput::images, 4,
           true},
          {"resnet32", "CIFAR ResNet-32, 0.46M parameters", ModelInput::images, 4, true},
          {"resnet56", "CIFAR ResNet-56, 0.85M parameters", ModelInput::images, 4, true},
          {"vgg16", "VGG-16 with batch norm, CIFAR variant, 14.7M parameters", ModelInput::images,
           32},
          {"resnet50", "torchvision's ResNet-50 (ImageNet), 25.6M parameters", ModelInput::images,
           32, true},
          // The smallest side its three max-pools leave at least 1×1.
          {"alexnet", "torchvision's AlexNet (ImageNet), 61.1M parameters", ModelInput::images, 63},
          {"lstm", "word-level LSTM language model (--lstm-*), for --dataset ptb",
           ModelInput::tokens},
          {"torchscript",
           "your own network: a module saved with torch.jit.save (--model-file; "
           "tools/export_torchscript.py)",
           ModelInput::images, 1, false, true},
      });
  return table;
}

const ModelRow& find_model(std::string_view name) {
  return model_table().find(name);
}

}  // namespace commsgd::trainer
