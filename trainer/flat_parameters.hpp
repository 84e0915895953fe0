#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <span>

namespace commsgd::trainer {

// Moves every parameter of a model into one contiguous float buffer, and every gradient into
// another, so that the algorithms see the model as two flat spans (DESIGN.md: the trainer hands
// the algorithm flat buffers). Parameters and gradients stay usable by LibTorch: each is a view
// into its buffer, and autograd accumulates into existing gradients in place. Floating-point
// module buffers (batch-norm running statistics) get a third flat buffer, so they can be
// broadcast in one call.
class FlatParameters {
 public:
  explicit FlatParameters(torch::nn::Module& model);

  std::span<float> params() { return span_of(params_); }
  std::span<float> grads() { return span_of(grads_); }
  std::span<float> buffers() { return span_of(buffers_); }

  void zero_grads() { grads_.zero_(); }

  // Throws std::logic_error if autograd replaced a gradient view by a tensor of its own (the
  // update would then be computed from stale zeros); cheap enough to call after every backward.
  void check_grads_in_place() const;

 private:
  static std::span<float> span_of(torch::Tensor& t) {
    return {t.data_ptr<float>(), static_cast<std::size_t>(t.numel())};
  }

  std::vector<torch::Tensor> parameters_;
  torch::Tensor params_, grads_, buffers_;
};

}  // namespace commsgd::trainer
