#include "trainer/flat_parameters.hpp"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <stdexcept>
#include <string>

namespace commsgd::trainer {
namespace {

std::int64_t total_numel(const std::vector<torch::Tensor>& tensors) {
  std::int64_t n = 0;
  for (const torch::Tensor& t : tensors) n += t.numel();
  return n;
}

// Copies each tensor's values into `flat`, on `device`, and re-points the tensor at its slice.
void move_into(std::vector<torch::Tensor>& tensors, torch::Tensor& flat,
               const torch::Device& device) {
  flat = torch::empty({total_numel(tensors)}, torch::dtype(torch::kFloat32).device(device));
  std::int64_t offset = 0;
  for (torch::Tensor& t : tensors) {
    torch::Tensor slice = flat.narrow(0, offset, t.numel()).view(t.sizes());
    slice.copy_(t.detach());
    t.set_data(slice);
    offset += t.numel();
  }
}

// A host tensor like `device_tensor`, in page-locked memory when that is a GPU's (copies to and
// from it run at the bus's speed).
torch::Tensor host_copy(const torch::Tensor& device_tensor) {
  return torch::empty({device_tensor.numel()}, torch::dtype(torch::kFloat32)
                                                   .device(torch::kCPU)
                                                   .pinned_memory(device_tensor.is_cuda()))
      .copy_(device_tensor);
}

// The model's device: where its first parameter is (all of them must be there).
torch::Device model_device(const std::vector<torch::Tensor>& parameters) {
  const torch::Device device =
      parameters.empty() ? torch::Device(torch::kCPU) : parameters[0].device();
  for (const torch::Tensor& p : parameters) {
    if (p.scalar_type() != torch::kFloat32) {
      throw std::invalid_argument("FlatParameters: only float32 parameters are supported");
    }
    if (p.device() != device) {
      throw std::invalid_argument("FlatParameters: the parameters are on more than one device");
    }
  }
  return device;
}

}  // namespace

FlatParameters::FlatParameters(torch::nn::Module& model, Staging staging)
    : parameters_(model.parameters()) {
  const torch::Device device = model_device(parameters_);
  staged_ = staging == Staging::always || (staging == Staging::when_needed && !device.is_cpu());
  const torch::NoGradGuard no_grad;
  move_into(parameters_, params_, device);

  grads_ = torch::zeros({params_.numel()}, torch::dtype(torch::kFloat32).device(device));
  std::int64_t offset = 0;
  for (torch::Tensor& p : parameters_) {
    p.mutable_grad() = grads_.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }

  std::vector<torch::Tensor> float_buffers;
  for (const torch::Tensor& b : model.buffers()) {
    if (b.scalar_type() == torch::kFloat32) float_buffers.push_back(b);
  }
  move_into(float_buffers, buffers_, device);

  host_params_ = staged_ ? host_copy(params_) : params_;
  host_grads_ = staged_ ? host_copy(grads_) : grads_;
  host_buffers_ = staged_ ? host_copy(buffers_) : buffers_;
}

kernels::Buffer<float> buffer_of(torch::Tensor& flat) {
  const kernels::Place place = flat.is_cuda() ? kernels::cuda_place(nullptr) : kernels::kHost;
  return {flat.data_ptr<float>(), static_cast<std::size_t>(flat.numel()), place};
}

std::vector<float> values_on_host(const torch::Tensor& t) {
  const torch::Tensor host = t.to(torch::kCPU).contiguous();
  const float* begin = host.data_ptr<float>();
  return {begin, begin + host.numel()};
}

void set_values(torch::Tensor& t, std::span<const float> values) {
  if (values.size() != static_cast<std::size_t>(t.numel())) {
    throw std::invalid_argument("set_values: " + std::to_string(values.size()) +
                                " values for a buffer of " + std::to_string(t.numel()));
  }
  const torch::NoGradGuard no_grad;
  t.copy_(torch::from_blob(const_cast<float*>(values.data()), {t.numel()}));
}

std::vector<algorithms::ParameterLayout> FlatParameters::layout() const {
  std::vector<algorithms::ParameterLayout> layout;
  std::size_t offset = 0;
  for (const torch::Tensor& p : parameters_) {
    layout.push_back({offset, p.sizes().vec()});
    offset += static_cast<std::size_t>(p.numel());
  }
  return layout;
}

void FlatParameters::params_to_device() {
  if (staged_) params_.copy_(host_params_);
}

void FlatParameters::grads_to_host() {
  if (staged_) host_grads_.copy_(grads_);
}

void FlatParameters::buffers_to_host() {
  if (staged_) host_buffers_.copy_(buffers_);
}

void FlatParameters::buffers_to_device() {
  if (staged_) buffers_.copy_(host_buffers_);
}

void FlatParameters::zero_grads() {
  grads_.zero_();
  if (staged_) host_grads_.zero_();
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
          [this, ready, offset, count](const variable_list& outputs, const variable_list&) {
            // A blocking copy: it waits for the accumulation that was just queued on the GPU.
            if (staged_) {
              const auto begin = static_cast<std::int64_t>(offset);
              const auto n = static_cast<std::int64_t>(count);
              host_grads_.narrow(0, begin, n).copy_(grads_.narrow(0, begin, n));
            }
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
