#include "trainer/torchscript_model.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <torch/script.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "trainer/options.hpp"

namespace commsgd::trainer {
namespace {

// c10::Error's first line: the rest is LibTorch's C++ and TorchScript backtrace.
std::string first_line(const std::string& message) {
  return message.substr(0, message.find('\n'));
}

// nn::Module names may not contain dots; a submodule's "layer1.0.weight" becomes
// "layer1_0_weight".
std::string flat_name(std::string name) {
  std::ranges::replace(name, '.', '_');
  return name;
}

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, const std::string& file)
      : module_(std::move(module)) {
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      if (p.value.requires_grad()) {
        register_parameter(flat_name(p.name), p.value);
      } else {
        register_buffer(flat_name(p.name), p.value);
      }
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
      register_buffer(flat_name(b.name), b.value);
    }
    if (parameters().empty()) {
      throw UsageError("--model-file " + file + ": the module has no trainable parameters");
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    return module_.forward({std::move(x)}).toTensor();
  }

  void train(bool on) override {
    Model::train(on);
    module_.train(on);
  }

  // The module's code and its attributes' names and types, without their values, the addresses
  // of its submodules in this process or the source lines the code came from: two files of the
  // same network hash alike, whatever their weights and wherever they were exported.
  std::string structure() const override {
    static const std::regex address(" object at 0x[0-9a-f]+"), source_line(" # [^\n]*");
    const std::string dump = module_.dump_to_str(
        /*print_method_bodies=*/true, /*print_attr_values=*/false, /*print_param_values=*/false);
    return std::regex_replace(std::regex_replace(dump, address, " object"), source_line, "");
  }

  // One forward pass in eval mode (no running statistic moves) on zeros of the data set's shape.
  void check_output(const ModelSpec& spec, const std::string& file) {
    const std::vector<std::int64_t> input = {2, spec.channels, spec.height, spec.width};
    const bool was_training = is_training();
    train(false);
    torch::jit::IValue output;
    try {
      const torch::NoGradGuard no_grad;
      output = module_.forward({torch::zeros(input)});
    } catch (const c10::Error& e) {
      throw UsageError(fmt::format("--model-file {}: forward fails on a batch [{}]: {}", file,
                                   fmt::join(input, ", "), first_line(e.what_without_backtrace())));
    }
    train(was_training);
    if (!output.isTensor()) {
      throw UsageError(fmt::format("--model-file {}: forward returns a {}, not a tensor of logits",
                                   file, output.tagKind()));
    }
    const torch::Tensor logits = output.toTensor();
    if (logits.dim() != 2 || logits.size(0) != 2 || logits.size(1) != spec.classes) {
      throw UsageError(fmt::format(
          "--model-file {}: forward returns [{}] for a batch [{}]; expected logits [2, {}] (the "
          "data set has {} classes)",
          file, fmt::join(logits.sizes(), ", "), fmt::join(input, ", "), spec.classes,
          spec.classes));
    }
  }

 private:
  torch::jit::Module module_;
};

}  // namespace

std::shared_ptr<Model> load_torchscript_model(const ModelSpec& spec) {
  const std::string& file = spec.file;
  if (!std::filesystem::is_regular_file(file)) {
    throw UsageError("--model-file " + file + ": no such file");
  }
  torch::jit::Module module;
  try {
    module = torch::jit::load(file, torch::kCPU);
  } catch (const c10::Error& e) {
    throw UsageError(
        fmt::format("--model-file {}: not a TorchScript archive (save one with torch.jit.save; see "
                    "tools/export_torchscript.py): {}",
                    file, first_line(e.what_without_backtrace())));
  }
  auto model = std::make_shared<TorchScriptModel>(std::move(module), file);
  model->check_output(spec, file);
  return model;
}

}  // namespace commsgd::trainer
