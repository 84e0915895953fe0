#include "trainer/flat_parameters.hpp"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <stdexcept>

namespace commsgd::trainer {
namespace {

std::int64_t total_numel(const std::vector<torch::Tensor>& tensors) {
  std::int64_t n = 0;
  for (const torch::Tensor& t : tensors) n += t.numel();
  return n;
}

// Copies each tensor's values into `flat` and re-points the tensor at its slice of it.
void move_into(std::vector<torch::Tensor>& tensors, torch::Tensor& flat) {
  flat = torch::empty({total_numel(tensors)}, torch::kFloat32);
  std::int64_t offset = 0;
  for (torch::Tensor& t : tensors) {
    torch::Tensor slice = flat.narrow(0, offset, t.numel()).view(t.sizes());
    slice.copy_(t.detach());
    t.set_data(slice);
    offset += t.numel();
  }
}

}  // namespace

FlatParameters::FlatParameters(torch::nn::Module& model) : parameters_(model.parameters()) {
  for (const torch::Tensor& p : parameters_) {
    if (p.scalar_type() != torch::kFloat32) {
      throw std::invalid_argument("FlatParameters: only float32 parameters are supported");
    }
  }
  const torch::NoGradGuard no_grad;
  move_into(parameters_, params_);

  grads_ = torch::zeros({params_.numel()}, torch::kFloat32);
  std::int64_t offset = 0;
  for (torch::Tensor& p : parameters_) {
    p.mutable_grad() = grads_.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }

  std::vector<torch::Tensor> float_buffers;
  for (const torch::Tensor& b : model.buffers()) {
    if (b.scalar_type() == torch::kFloat32) float_buffers.push_back(b);
  }
  move_into(float_buffers, buffers_);
}

void FlatParameters::on_gradient_ready(
    std::function<void(std::size_t offset, std::size_t count)> ready) {
  if (!accumulators_.empty()) throw std::logic_error("on_gradient_ready: already set");
  using torch::autograd::variable_list;
  std::size_t offset = 0;
  for (const torch::Tensor& p : parameters_) {
    const auto count = static_cast<std::size_t>(p.numel());
    if (std::shared_ptr<torch::autograd::Node> accumulator =
            torch::autograd::impl::grad_accumulator(p)) {
      accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [ready, offset, count](const variable_list& outputs, const variable_list&) {
            ready(offset, count);
            return outputs;
          }));
      accumulators_.push_back(std::move(accumulator));
    }
    offset += count;
  }
}

void FlatParameters::check_grads_in_place() const {
  const float* begin = grads_.data_ptr<float>();
  const float* end = begin + grads_.numel();
  for (const torch::Tensor& p : parameters_) {
    const float* g = p.grad().defined() ? p.grad().data_ptr<float>() : nullptr;
    if (g < begin || g >= end) {
      throw std::logic_error("a gradient left the flat gradient buffer (autograd replaced it)");
    }
  }
}

}  // namespace commsgd::trainer
