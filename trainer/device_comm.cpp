#include "trainer/device_comm.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>

#ifdef COMMSGD_WITH_CUDA_COMM
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

#include "algorithms/comm/staged_backend.hpp"
#include "kernels/cuda/device_array.hpp"
#ifdef COMMSGD_WITH_NCCL
#include "algorithms/comm/nccl_backend.hpp"
#endif
#endif

namespace commsgd::trainer {

bool device_comm_built() {
#ifdef COMMSGD_WITH_CUDA_COMM
  return true;
#else
  return false;
#endif
}

std::string attach_device_backend(comm::Communicator& comm, int device, bool own_gpu,
                                  double timeout_seconds) {
  std::int64_t everyone_own = own_gpu ? 1 : 0;
  comm.allreduce(std::span(&everyone_own, 1), comm::ReduceOp::min);
#ifdef COMMSGD_WITH_CUDA_COMM
  // A device back end works on the device current when it is made; LibTorch sets the device
  // only around its own calls.
  kernels::cuda::check(cudaSetDevice(device), "cudaSetDevice");
#ifdef COMMSGD_WITH_NCCL
  if (everyone_own == 1) {
    const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000));
    comm.attach_device_backend(std::make_unique<comm::NcclBackend>(comm, timeout));
    return "nccl";
  }
#endif
  comm.attach_device_backend(std::make_unique<comm::StagedBackend>(comm));
  return "mpi-staged";
#else
  (void)device, (void)timeout_seconds;
  throw std::logic_error("this commsgd-train was built without CUDA");
#endif
}

}  // namespace commsgd::trainer
