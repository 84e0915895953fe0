#pragma once

// What the GPU tests under mpirun skip on: every rank decides alike, so no rank waits in a
// collective for one that skipped.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string>

#include <cstdlib>

#include "algorithms/comm/mpi_communicator.hpp"

namespace commsgd::testing {

// Empty when every rank sees a CUDA device, else why not. Collective.
inline std::string no_cuda_device(comm::Communicator& comm) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  std::int64_t everyone = devices > 0 ? 1 : 0;
  comm.allreduce(std::span(&everyone, 1), comm::ReduceOp::min);
  return everyone == 1 ? "" : "needs a CUDA device on every rank";
}

// Empty when every rank can have an NCCL rank of its own (NCCL refuses two ranks of one
// communicator on one device), else why not. Collective: every rank takes the same decision. A
// launch that gives each rank an NCCL_HOSTID of its own (scripts/gpu-check.sh on a one-GPU
// machine) makes NCCL take the ranks for hosts apart, which lets them share a device.
inline std::string no_gpu_per_rank(comm::MpiCommunicator& mpi) {
  const int ranks = mpi.placement().local_size;
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess) devices = 0;
  const bool hosts_apart = std::getenv("NCCL_HOSTID") != nullptr;
  std::int64_t enough = devices >= ranks || (hosts_apart && devices > 0) ? 1 : 0;
  mpi.allreduce(std::span(&enough, 1), comm::ReduceOp::min);
  if (enough == 1) return "";
  if (devices >= ranks) return "needs one CUDA device per rank: another node has too few";
  std::string why = "needs one CUDA device per rank (or an NCCL_HOSTID per rank): " +
                    std::to_string(devices) + " device(s) for " + std::to_string(ranks) +
                    " rank(s)";
  if (error != cudaSuccess) {
    why += std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(error) + ")";
  }
  return why;
}

}  // namespace commsgd::testing
