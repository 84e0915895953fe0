#include "trainer/device_choice.hpp"

#include <fmt/core.h>

namespace commsgd::trainer {

std::string resolve_auto_device(const std::string& requested, bool cuda_built, bool gpu_visible) {
  if (requested != "auto") return requested;
  return cuda_built && gpu_visible ? "cuda" : "cpu";
}

std::optional<std::string> device_disagreement(const std::string& requested, int on_gpu,
                                               int ranks) {
  if (on_gpu == 0 || on_gpu == ranks) return std::nullopt;
  return fmt::format(
      "--device {}: {} of {} ranks would train on a GPU and the others on the CPU (auto takes a "
      "GPU where commsgd-train was built with CUDA and LibTorch sees one); run every rank on "
      "alike nodes and builds, or set --device cpu or cuda",
      requested, on_gpu, ranks);
}

}  // namespace commsgd::trainer
