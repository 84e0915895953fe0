// commsgd-train --version and --check-build: what a build is made of, a line each, so that a
// user sees what they built before they submit a multi-node job (and a support desk can ask for
// it). Lines are "name: value", the first "commsgd-train <commit>".
#pragma once

#include <string>
#include <vector>

namespace commsgd::trainer {

// The build: commit, LibTorch (version, CUDA or not), the CUDA kernels, NCCL, the MPI library,
// CUDA-aware MPI, the SIMD path each kernel takes on this CPU. With `run_time`, also what this node
// gives it: the GPUs LibTorch sees.
std::vector<std::string> build_report(bool run_time);

}  // namespace commsgd::trainer
