#pragma once

// What the GPU tests under mpirun skip on: every rank decides alike, so no rank waits in a
// collective for one that skipped.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::testing {

// Empty when every rank sees a CUDA device, else why not. Collective.
inline std::string no_cuda_device(comm::Communicator& comm) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  std::int64_t everyone = devices > 0 ? 1 : 0;
  comm.allreduce(std::span(&everyone, 1), comm::ReduceOp::min);
  return everyone == 1 ? "" : "needs a CUDA device on every rank";
}

}  // namespace commsgd::testing
