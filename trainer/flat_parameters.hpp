#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

namespace torch::autograd {
struct Node;
}

#include <functional>
#include <memory>
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

  // Calls ready(offset, count) each time backward has finished accumulating a parameter's
  // gradient, [offset, offset + count) of grads(), from the thread running backward (post-hooks on
  // the parameters' gradient accumulators, as PyTorch DDP uses). Set once.
  void on_gradient_ready(std::function<void(std::size_t offset, std::size_t count)> ready);

  // Throws std::logic_error if autograd replaced a gradient view by a tensor of its own (the
  // update would then be computed from stale zeros); cheap enough to call after every backward.
  void check_grads_in_place() const;

 private:
  static std::span<float> span_of(torch::Tensor& t) {
    return {t.data_ptr<float>(), static_cast<std::size_t>(t.numel())};
  }

  std::vector<torch::Tensor> parameters_;
  // A parameter holds its accumulator weakly; the hooks live as long as these do.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  torch::Tensor params_, grads_, buffers_;
};

}  // namespace commsgd::trainer
