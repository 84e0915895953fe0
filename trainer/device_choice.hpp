// --device auto: a GPU where the run can train on one, else the CPU, alike on every rank. Pure
// functions of what the build, LibTorch and the ranks say (setup.cpp asks them), so that the
// choice is tested on machines without a GPU.
#pragma once

#include <optional>
#include <string>

namespace commsgd::trainer {

// The device --device `requested` stands for on this rank: auto is cuda (each rank the GPU of its
// node-local rank) where this commsgd-train was built to communicate on GPUs (`cuda_built`) and
// LibTorch sees a GPU (`gpu_visible`), else cpu; cpu, cuda and cuda:N stand for themselves.
std::string resolve_auto_device(const std::string& requested, bool cuda_built, bool gpu_visible);

// The line that fails setup when `on_gpu` of the job's `ranks` would train on a GPU and the
// others on the CPU (with auto: a node without a GPU, or a build without CUDA, among ones with
// them); none when they all chose alike. `requested` is --device as given.
std::optional<std::string> device_disagreement(const std::string& requested, int on_gpu, int ranks);

}  // namespace commsgd::trainer
