#include "trainer/models.hpp"

#include <torch/nn/functional.h>
#include <torch/nn/init.h>
#include <torch/nn/modules.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include "trainer/model_table.hpp"
#include "trainer/options.hpp"
#include "trainer/torchscript_model.hpp"

namespace commsgd::trainer {
namespace {

namespace nn = torch::nn;
namespace F = torch::nn::functional;

class Mlp final : public Model {
 public:
  Mlp(int inputs, const std::vector<int>& hidden, int classes) {
    int width = inputs;
    for (std::size_t i = 0; i < hidden.size(); ++i) {
      layers_->push_back(nn::Linear(width, hidden[i]));
      layers_->push_back(nn::ReLU());
      width = hidden[i];
    }
    layers_->push_back(nn::Linear(width, classes));
    register_module("layers", layers_);
  }
  torch::Tensor forward(torch::Tensor x) override { return layers_->forward(x.flatten(1)); }

 private:
  nn::Sequential layers_;
};

// LeNet-5 with "same" padding, so it takes any input of at least 4×4 (8×8 digits, 28×28 MNIST,
// 32×32 CIFAR).
class LeNet final : public Model {
 public:
  LeNet(int channels, int height, int width, int classes)
      : conv1_(nn::Conv2dOptions(channels, 6, 5).padding(2)),
        conv2_(nn::Conv2dOptions(6, 16, 5).padding(2)),
        fc1_(16 * (height / 4) * (width / 4), 120),
        fc2_(120, 84),
        fc3_(84, classes) {
    register_module("conv1", conv1_);
    register_module("conv2", conv2_);
    register_module("fc1", fc1_);
    register_module("fc2", fc2_);
    register_module("fc3", fc3_);
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = F::max_pool2d(torch::relu(conv1_(x)), F::MaxPool2dFuncOptions(2));
    x = F::max_pool2d(torch::relu(conv2_(x)), F::MaxPool2dFuncOptions(2));
    x = torch::relu(fc1_(x.flatten(1)));
    return fc3_(torch::relu(fc2_(x)));
  }

 private:
  nn::Conv2d conv1_, conv2_;
  nn::Linear fc1_, fc2_, fc3_;
};

// He et al.'s initialization of every convolution of a ResNet (normal, fan-out, for ReLU), as
// torchvision's.
void init_convolutions(nn::Module& model) {
  for (auto& module : model.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    }
  }
}

// GaussianK-SGD's CIFAR ResNet initialization (models/resnet.py:72-84): every convolution
// U(±1/√(k·k·out_channels)), about 2.45 times narrower than He's fan-out normal for a 3×3 kernel,
// and the classifier He normal over its fan-in with a zero bias.
void init_uniform_fan_out(nn::Module& model, nn::Linear& classifier) {
  for (auto& module : model.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<nn::Conv2d>()) {
      const auto& kernel = conv->options.kernel_size();
      const double bound = 1.0 / std::sqrt(static_cast<double>(kernel->at(0) * kernel->at(1) *
                                                               conv->options.out_channels()));
      nn::init::uniform_(conv->weight, -bound, bound);
    }
  }
  nn::init::kaiming_normal_(classifier->weight, 0.0, torch::kFanIn, torch::kReLU);
  nn::init::zeros_(classifier->bias);
}

nn::Conv2d conv3x3(int in, int out, int stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// A residual block: what --zero-init-residual zeroes is the scale of its last batch norm, so that
// the block starts as its shortcut.
class ResidualBlock : public nn::Module {
 public:
  virtual nn::BatchNorm2d& last_norm() = 0;
};

// The CIFAR residual block of He et al. (2016), with the parameter-free "option A" shortcut the
// paper uses on CIFAR: subsample by the stride and zero-pad the new channels.
class BasicBlock final : public ResidualBlock {
 public:
  BasicBlock(int in, int out, int stride)
      : conv1_(conv3x3(in, out, stride)),
        bn1_(out),
        conv2_(conv3x3(out, out, 1)),
        bn2_(out),
        stride_(stride),
        pad_channels_(out - in) {
    register_module("conv1", conv1_);
    register_module("bn1", bn1_);
    register_module("conv2", conv2_);
    register_module("bn2", bn2_);
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_(conv1_(x)));
    out = bn2_(conv2_(out));
    torch::Tensor shortcut = x;
    if (stride_ != 1 || pad_channels_ != 0) {
      using torch::indexing::Slice;
      shortcut =
          x.index({Slice(), Slice(), Slice(None, None, stride_), Slice(None, None, stride_)});
      const int before = pad_channels_ / 2;
      shortcut = F::pad(shortcut, F::PadFuncOptions({0, 0, 0, 0, before, pad_channels_ - before}));
    }
    return torch::relu(out + shortcut);
  }
  nn::BatchNorm2d& last_norm() override { return bn2_; }

 private:
  static constexpr auto None = torch::indexing::None;
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  int stride_;
  int pad_channels_;
};

// VGG-16 with batch norm, the CIFAR variant: 13 conv layers, one linear classifier on 512 features.
class Vgg16 final : public Model {
 public:
  Vgg16(int channels, int classes) : fc_(512, classes) {
    const int M = 0;  // max-pool
    int in = channels;
    for (const int width :
         {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M}) {
      if (width == M) {
        features_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
        continue;
      }
      features_->push_back(nn::Conv2d(nn::Conv2dOptions(in, width, 3).padding(1)));
      features_->push_back(nn::BatchNorm2d(width));
      features_->push_back(nn::ReLU(nn::ReLUOptions(true)));
      in = width;
    }
    register_module("features", features_);
    register_module("fc", fc_);
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = features_->forward(x);
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1));
    return fc_(x.flatten(1));
  }

 private:
  nn::Sequential features_;
  nn::Linear fc_;
};

nn::Conv2d conv(int in, int out, int kernel, int stride, int padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// The ImageNet bottleneck block of ResNet-50 as torchvision builds it ("v1.5": the stride is on
// the 3×3 convolution), with a projection shortcut where the shape changes.
class Bottleneck final : public ResidualBlock {
 public:
  static constexpr int kExpansion = 4;
  Bottleneck(int in, int width, int stride)
      : conv1_(conv(in, width, 1, 1, 0)),
        bn1_(width),
        conv2_(conv(width, width, 3, stride, 1)),
        bn2_(width),
        conv3_(conv(width, width * kExpansion, 1, 1, 0)),
        bn3_(width * kExpansion) {
    register_module("conv1", conv1_);
    register_module("bn1", bn1_);
    register_module("conv2", conv2_);
    register_module("bn2", bn2_);
    register_module("conv3", conv3_);
    register_module("bn3", bn3_);
    if (stride != 1 || in != width * kExpansion) {
      shortcut_->push_back(conv(in, width * kExpansion, 1, stride, 0));
      shortcut_->push_back(nn::BatchNorm2d(width * kExpansion));
      register_module("shortcut", shortcut_);
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_(conv1_(x)));
    out = torch::relu(bn2_(conv2_(out)));
    out = bn3_(conv3_(out));
    return torch::relu(out + (shortcut_->is_empty() ? x : shortcut_->forward(x)));
  }
  nn::BatchNorm2d& last_norm() override { return bn3_; }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Conv2d conv3_;
  nn::BatchNorm2d bn3_;
  nn::Sequential shortcut_;
};

// A residual network (He et al. 2016): a stem (convolution, batch norm, ReLU and, for ImageNet, a
// max-pool), the residual blocks, global average pooling and a linear classifier.
class ResNet final : public Model {
 public:
  ResNet(nn::Conv2d stem, int stem_width, bool stem_pool, nn::Sequential blocks, int features,
         int classes, const ResNetInit& init)
      : conv_(std::move(stem)),
        bn_(stem_width),
        blocks_(std::move(blocks)),
        fc_(features, classes),
        stem_pool_(stem_pool) {
    register_module("conv", conv_);
    register_module("bn", bn_);
    register_module("blocks", blocks_);
    register_module("fc", fc_);
    if (init.uniform_fan_out) {
      init_uniform_fan_out(*this, fc_);
    } else {
      init_convolutions(*this);
    }
    if (init.zero_residual) {
      for (const auto& block : blocks_->children()) {
        nn::init::zeros_(std::dynamic_pointer_cast<ResidualBlock>(block)->last_norm()->weight);
      }
    }
    if (init.fc_std > 0) nn::init::normal_(fc_->weight, 0.0, init.fc_std);
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn_(conv_(x)));
    if (stem_pool_) x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
    x = blocks_->forward(x);
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1));
    return fc_(x.flatten(1));
  }

 private:
  nn::Conv2d conv_;
  nn::BatchNorm2d bn_;
  nn::Sequential blocks_;
  nn::Linear fc_;
  bool stem_pool_;
};

// The CIFAR ResNets of depth 6n + 2: three stages of n basic blocks, 16, 32 and 64 channels.
std::shared_ptr<Model> cifar_resnet(int depth, int channels, int classes, const ResNetInit& init) {
  nn::Sequential blocks;
  int in = 16;
  for (const int out : {16, 32, 64}) {
    for (int b = 0; b < (depth - 2) / 6; ++b) {
      const int stride = (b == 0 && out != 16) ? 2 : 1;
      blocks->push_back(std::make_shared<BasicBlock>(in, out, stride));
      in = out;
    }
  }
  return std::make_shared<ResNet>(conv3x3(channels, 16, 1), 16, false, blocks, 64, classes, init);
}

// ResNet-50 for ImageNet, as torchvision's resnet50: 25.6M parameters with 1000 classes.
std::shared_ptr<Model> resnet50(int channels, int classes, const ResNetInit& init) {
  nn::Sequential blocks;
  int in = 64;
  const std::pair<int, int> stages[] = {{64, 3}, {128, 4}, {256, 6}, {512, 3}};  // width, blocks
  for (const auto& [width, count] : stages) {
    for (int b = 0; b < count; ++b) {
      const int stride = (b == 0 && width != 64) ? 2 : 1;
      blocks->push_back(std::make_shared<Bottleneck>(in, width, stride));
      in = width * Bottleneck::kExpansion;
    }
  }
  return std::make_shared<ResNet>(conv(channels, 64, 7, 2, 3), 64, true, blocks, in, classes, init);
}

// AlexNet as torchvision builds it (the one-GPU variant of Krizhevsky et al. 2012 without local
// response normalization): 61.1M parameters with 1000 classes, 58M of them in the classifier,
// which is what makes it the communication-bound case of the gTop-k paper.
class AlexNet final : public Model {
 public:
  AlexNet(int channels, int classes) {
    const auto conv_relu = [this](int in, int out, int kernel, int stride, int padding) {
      features_->push_back(
          nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding)));
      features_->push_back(nn::ReLU(nn::ReLUOptions(true)));
    };
    const auto max_pool = [this] {
      features_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)));
    };
    conv_relu(channels, 64, 11, 4, 2);
    max_pool();
    conv_relu(64, 192, 5, 1, 2);
    max_pool();
    conv_relu(192, 384, 3, 1, 1);
    conv_relu(384, 256, 3, 1, 1);
    conv_relu(256, 256, 3, 1, 1);
    max_pool();
    classifier_->push_back(nn::Dropout(0.5));
    classifier_->push_back(nn::Linear(256 * 6 * 6, 4096));
    classifier_->push_back(nn::ReLU(nn::ReLUOptions(true)));
    classifier_->push_back(nn::Dropout(0.5));
    classifier_->push_back(nn::Linear(4096, 4096));
    classifier_->push_back(nn::ReLU(nn::ReLUOptions(true)));
    classifier_->push_back(nn::Linear(4096, classes));
    register_module("features", features_);
    register_module("classifier", classifier_);
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = features_->forward(x);
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(6));
    return classifier_->forward(x.flatten(1));
  }

 private:
  nn::Sequential features_, classifier_;
};

// The word-level language model of PyTorch's word_language_model example, as the gTop-k paper
// trains it on PTB: embedding, a stacked LSTM, and a linear layer to the vocabulary, with dropout
// between them. Tied, the output layer is the embedding matrix itself plus a bias of its own, so
// the matrix is one parameter (and one slice of the flat gradient), not two copies kept equal.
class LstmLanguageModel final : public Model {
 public:
  LstmLanguageModel(int vocabulary, const LstmSpec& spec)
      : spec_(spec),
        embedding_(vocabulary, spec.hidden),
        lstm_(nn::LSTMOptions(spec.hidden, spec.hidden)
                  .num_layers(spec.layers)
                  .dropout(spec.layers > 1 ? spec.dropout : 0.0)),
        dropout_(spec.dropout) {
    register_module("embedding", embedding_);
    register_module("lstm", lstm_);
    register_module("dropout", dropout_);
    nn::init::uniform_(embedding_->weight, -0.1, 0.1);
    if (spec.tied) {
      output_bias_ = register_parameter("output_bias", torch::zeros({vocabulary}));
    } else {
      output_ = register_module("output", nn::Linear(spec.hidden, vocabulary));
      nn::init::uniform_(output_->weight, -0.1, 0.1);
      nn::init::zeros_(output_->bias);
    }
  }

  torch::Tensor forward(torch::Tensor tokens) override {
    const std::int64_t streams = tokens.size(1);
    if (!state_ || std::get<0>(*state_).size(1) != streams) {
      const torch::Tensor zeros =
          torch::zeros({spec_.layers, streams, spec_.hidden}, embedding_->weight.options());
      state_ = {zeros, zeros.clone()};
    }
    auto [output, state] = lstm_->forward(dropout_(embedding_(tokens)), *state_);
    // Truncated BPTT: the next batch starts from this state, but no gradient flows back into it.
    state_ = {std::get<0>(state).detach(), std::get<1>(state).detach()};
    output = dropout_(output).flatten(0, 1);
    return spec_.tied ? F::linear(output, embedding_->weight, output_bias_) : output_(output);
  }

  void reset_state() override { state_.reset(); }

  std::vector<float> state() const override {
    if (!state_) return {};
    const torch::Tensor both =
        torch::cat({std::get<0>(*state_).flatten(), std::get<1>(*state_).flatten()})
            .to(torch::kCPU)
            .contiguous();
    return {both.data_ptr<float>(), both.data_ptr<float>() + both.numel()};
  }

  void set_state(std::span<const float> values) override {
    if (values.empty()) return reset_state();
    const auto per_stream = static_cast<std::int64_t>(2 * spec_.layers * spec_.hidden);
    const auto streams = static_cast<std::int64_t>(values.size()) / per_stream;
    const torch::Tensor both = torch::tensor(std::vector<float>(values.begin(), values.end()))
                                   .view({2, spec_.layers, streams, spec_.hidden})
                                   .to(embedding_->weight.device());
    state_ = {both[0].clone(), both[1].clone()};
  }

 private:
  const LstmSpec spec_;
  nn::Embedding embedding_;
  nn::LSTM lstm_;
  nn::Dropout dropout_;
  nn::Linear output_{nullptr};                                     // untied only
  torch::Tensor output_bias_;                                      // tied only
  std::optional<std::tuple<torch::Tensor, torch::Tensor>> state_;  // (h, c), [layers, B, hidden]
};

void require_size(const ModelSpec& spec, int min_side) {
  if (spec.height < min_side || spec.width < min_side) {
    throw UsageError("--model " + spec.name + " needs inputs of at least " +
                     std::to_string(min_side) + "x" + std::to_string(min_side) + " (the data is " +
                     std::to_string(spec.height) + "x" + std::to_string(spec.width) + ")");
  }
}

}  // namespace

std::string Model::structure() const {
  std::ostringstream text;
  for (const auto& p : named_parameters()) {
    text << "parameter " << p.key() << ' ' << p.value().sizes() << ' ' << p.value().dtype() << '\n';
  }
  for (const auto& b : named_buffers()) {
    text << "buffer " << b.key() << ' ' << b.value().sizes() << ' ' << b.value().dtype() << '\n';
  }
  return text.str();
}

std::shared_ptr<Model> make_model(const ModelSpec& spec) {
  using Factory = std::shared_ptr<Model> (*)(const ModelSpec&);
  // The networks of trainer/model_table.cpp's rows, by name.
  static const std::map<std::string_view, Factory> networks = {
      {"mlp",
       [](const ModelSpec& s) -> std::shared_ptr<Model> {
         return std::make_shared<Mlp>(s.channels * s.height * s.width, s.mlp_hidden, s.classes);
       }},
      {"lenet",
       [](const ModelSpec& s) -> std::shared_ptr<Model> {
         return std::make_shared<LeNet>(s.channels, s.height, s.width, s.classes);
       }},
      {"resnet20",
       [](const ModelSpec& s) { return cifar_resnet(20, s.channels, s.classes, s.resnet_init); }},
      {"resnet32",
       [](const ModelSpec& s) { return cifar_resnet(32, s.channels, s.classes, s.resnet_init); }},
      {"resnet56",
       [](const ModelSpec& s) { return cifar_resnet(56, s.channels, s.classes, s.resnet_init); }},
      {"vgg16",
       [](const ModelSpec& s) -> std::shared_ptr<Model> {
         return std::make_shared<Vgg16>(s.channels, s.classes);
       }},
      {"resnet50",
       [](const ModelSpec& s) { return resnet50(s.channels, s.classes, s.resnet_init); }},
      {"alexnet",
       [](const ModelSpec& s) -> std::shared_ptr<Model> {
         return std::make_shared<AlexNet>(s.channels, s.classes);
       }},
      {"lstm",
       [](const ModelSpec& s) -> std::shared_ptr<Model> {
         return std::make_shared<LstmLanguageModel>(s.classes, s.lstm);
       }},
      {"torchscript", load_torchscript_model},
  };
  const ModelRow& row = find_model(spec.name);
  require_size(spec, row.min_side);
  const auto network = networks.find(row.name);
  if (network == networks.end()) {
    throw std::logic_error("--model " + spec.name + " is in the table but has no network");
  }
  return network->second(spec);
}

}  // namespace commsgd::trainer
