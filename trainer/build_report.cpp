#include "trainer/build_report.hpp"

#include <ATen/Context.h>
#include <fmt/core.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "algorithms/comm/mpi_library.hpp"
#include "kernels/ops.hpp"
#include "kernels/qsgd.hpp"
#include "kernels/simd_path.hpp"
#include "trainer/git_revision.hpp"

namespace commsgd::trainer {

std::vector<std::string> build_report(bool run_time) {
  const comm::MpiLibrary mpi = comm::mpi_library();
#ifdef COMMSGD_WITH_NCCL
  constexpr bool nccl = true;
#else
  constexpr bool nccl = false;
#endif
  std::vector<std::string> lines = {
      fmt::format("commsgd-train {}", git_revision()),
      fmt::format("LibTorch: {}, {}", TORCH_VERSION,
                  at::hasCUDA() ? "with CUDA" : "CPU only (--device cuda is not available)"),
      fmt::format("CUDA kernels: {}", kernels::ops::cuda_built() ? "built" : "not built"),
      fmt::format("NCCL: {}", nccl ? "built" : "not built (GPUs communicate over MPI)"),
      fmt::format("MPI: {} (MPI {})", mpi.version, mpi.standard),
      fmt::format("CUDA-aware MPI: {}", mpi.cuda_aware),
      fmt::format("SIMD: gTop-k's merge {}, QSGD's codes {}, the other kernels {}",
                  kernels::name_of(kernels::merge_simd_path()),
                  kernels::name_of(kernels::qsgd_simd_path()), kernels::baseline_vector_isa()),
  };
  if (run_time) {
    lines.push_back(
        fmt::format("GPUs LibTorch sees: {}", at::hasCUDA() ? torch::cuda::device_count() : 0));
  }
  return lines;
}

}  // namespace commsgd::trainer
