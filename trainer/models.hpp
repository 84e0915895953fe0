#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace commsgd::trainer {

// Every model maps a batch to logits [N, classes]: an image classifier a batch [N, C, H, W], a
// language model a batch of token ids [T, B] (sequence first) to one row per token, N = T·B.
class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;

  // A model that carries state from one batch to the next (a language model's recurrent state,
  // for truncated back-propagation through time) starts afresh after reset_state(), and hands the
  // state out and back for checkpoints. Classifiers have none.
  virtual void reset_state() {}
  virtual std::vector<float> state() const { return {}; }
  virtual void set_state(std::span<const float> /*state*/) {}

  // What ranks compare at start-up to know they built the same network: by default the names,
  // shapes and types of the parameters and buffers; a loaded module adds its code.
  virtual std::string structure() const;
};

struct LstmSpec {
  int hidden = 1500;  // also the embedding width
  int layers = 2;
  double dropout = 0.65;
  bool tied = true;  // the output layer uses the embedding matrix (Press & Wolf, 2017)
};

// Departures from a ResNet's default initialization: --zero-init-residual and --fc-init-std, as
// the SGP code initializes its ResNet-50 (gossip_sgd.py, init_model); --uniform-fan-out-init, as
// GaussianK-SGD initializes its CIFAR ResNets (models/resnet.py).
struct ResNetInit {
  bool zero_residual = false;  // each block's last batch-norm scale starts at 0
  double fc_std = 0;           // > 0: the classifier's weights drawn from N(0, fc_std²)
  // Convolutions U(±1/√(k·k·out_channels)) rather than He normal (fan-out); the classifier He
  // normal (fan-in) with bias 0. fc_std, when set, still replaces the classifier's weights.
  bool uniform_fan_out = false;
};

struct ModelSpec {
  // a row of model_table() (trainer/model_table.hpp)
  std::string name;
  int channels = 1, height = 1, width = 1;
  int classes = 10;  // the vocabulary's size for lstm
  std::vector<int> mlp_hidden = {128};
  LstmSpec lstm;
  ResNetInit resnet_init;
  std::string file;  // torchscript: the module to load (--model-file)
};

// Throws UsageError when the model cannot take the input shape (e.g. vgg16 on 8×8 images).
std::shared_ptr<Model> make_model(const ModelSpec& spec);

}  // namespace commsgd::trainer
