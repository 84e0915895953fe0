#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

namespace torch::autograd {
struct Node;
}

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "kernels/buffer.hpp"

namespace commsgd::trainer {

// A flat float32 tensor as a buffer: host memory, or its GPU's on LibTorch's default stream (the
// one stream every computation of the trainer is enqueued on).
kernels::Buffer<float> buffer_of(torch::Tensor& flat);
// Its values copied to the host, and set from the host; throws std::invalid_argument when the
// sizes differ.
std::vector<float> values_on_host(const torch::Tensor& flat);
void set_values(torch::Tensor& flat, std::span<const float> values);

// Moves every parameter of a model into one contiguous float buffer, and every gradient into
// another, so that the algorithms see the model as two flat buffers (docs/design.md,
// "Architecture": the trainer hands the algorithm flat buffers). Parameters and gradients stay
// usable by LibTorch: each is a view into its buffer, and autograd accumulates into existing
// gradients in place. Floating-point module buffers (batch-norm running statistics) get a third
// flat buffer, so they can be broadcast in one call.
//
// The buffers live where the model does, and params(), grads() and buffers() say where
// (kernels/buffer.hpp): on a GPU, device buffers on LibTorch's default stream, which the
// algorithms, the optimizer and NCCL work on in place. Staging is for algorithms that work on
// host buffers only: with it, and the model on a GPU (or `always`), the three are host copies,
// which the algorithms, the optimizer and MPI work on; the *_to_device / *_to_host calls move
// them across, and are no-ops without staging. Host parameters are then the ones that count
// (only the host updates them): upload them before each forward pass. The module buffers are the
// device's (forward updates them): download them before the host reads them, upload them after
// it writes them.
class FlatParameters {
 public:
  // when_needed: host copies when the model is not in host memory; never: the buffers as they
  // are, wherever the model is; always: host copies even of a host model (tests).
  enum class Staging { when_needed, never, always };
  explicit FlatParameters(torch::nn::Module& model, Staging staging = Staging::when_needed);

  kernels::Buffer<float> params() { return buffer_of(host_params_); }
  kernels::Buffer<float> grads() { return buffer_of(host_grads_); }
  kernels::Buffer<float> buffers() { return buffer_of(host_buffers_); }
  // Host copies of the values, and values set from the host, wherever the buffers are (for
  // checkpoints and --dump-params: not on the path of a step).
  std::vector<float> params_on_host() const { return values_on_host(host_params_); }
  std::vector<float> buffers_on_host() const { return values_on_host(host_buffers_); }
  void set_params(std::span<const float> values) { set_values(host_params_, values); }
  void set_buffers(std::span<const float> values) { set_values(host_buffers_, values); }

  // Each parameter's offset in params() and grads(), and its shape, in the order they lie there.
  std::vector<algorithms::ParameterLayout> layout() const;

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
  std::vector<torch::Tensor> parameters_;
  // A parameter holds its accumulator weakly; the hooks live as long as these do.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  bool staged_;
  torch::Tensor params_, grads_, buffers_;                 // where the model is
  torch::Tensor host_params_, host_grads_, host_buffers_;  // the same tensors when not staged
};

}  // namespace commsgd::trainer
