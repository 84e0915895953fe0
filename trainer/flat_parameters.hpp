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
// another, so that the algorithms see the model as two flat spans (docs/design.md, "Architecture":
// the trainer hands the algorithm flat buffers). Parameters and gradients stay usable by LibTorch:
// each is a view into its buffer, and autograd accumulates into existing gradients in place.
// Floating-point module buffers (batch-norm running statistics) get a third flat buffer, so they
// can be broadcast in one call.
//
// The buffers live where the model does. When that is not host memory (a GPU), or `staging` asks
// for it, params(), grads() and buffers() are host copies, which the algorithms, the optimizer
// and MPI work on; the *_to_device / *_to_host calls move them across, and are no-ops without
// staging. Host parameters are the ones that count (only the host updates them): upload them
// before each forward pass. The module buffers are the device's (forward updates them): download
// them before the host reads them, upload them after it writes them.
class FlatParameters {
 public:
  enum class Staging { when_needed, always };
  explicit FlatParameters(torch::nn::Module& model, Staging staging = Staging::when_needed);

  std::span<float> params() { return span_of(host_params_); }
  std::span<float> grads() { return span_of(host_grads_); }
  std::span<float> buffers() { return span_of(host_buffers_); }

  bool staged() const { return staged_; }
  void params_to_device();
  void grads_to_host();
  void buffers_to_host();
  void buffers_to_device();

  void zero_grads();

  // Calls ready(offset, count) each time backward has finished accumulating a parameter's
  // gradient, [offset, offset + count) of grads() (downloaded first when staged), from the
  // thread running backward (post-hooks on the parameters' gradient accumulators, as PyTorch DDP
  // uses). Set once.
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
  bool staged_;
  torch::Tensor params_, grads_, buffers_;                 // where the model is
  torch::Tensor host_params_, host_grads_, host_buffers_;  // the same tensors when not staged
};

}  // namespace commsgd::trainer
