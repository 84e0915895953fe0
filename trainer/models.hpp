#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

namespace commsgd::trainer {

// Every model maps a batch [N, C, H, W] to logits [N, classes].
class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

struct ModelSpec {
  std::string name;  // mlp | lenet | resnet20 | resnet32 | resnet56 | vgg16 | resnet50 | alexnet
  int channels = 1, height = 1, width = 1;
  int classes = 10;
  std::vector<int> mlp_hidden = {128};
};

// Throws UsageError when the model cannot take the input shape (e.g. vgg16 on 8×8 images).
std::shared_ptr<Model> make_model(const ModelSpec& spec);

}  // namespace commsgd::trainer
