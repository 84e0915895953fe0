#include "trainer/device_comm.hpp"

#include <cstring>
#include <optional>
#include <stdexcept>

#include "trainer/setup_check.hpp"

#ifdef COMMSGD_WITH_CUDA_COMM
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

#include "algorithms/comm/staged_backend.hpp"
#include "kernels/cuda/device_array.hpp"
#ifdef COMMSGD_WITH_NCCL
#include "algorithms/comm/make_nccl_backend.hpp"
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

std::vector<GpuUuid> gather_gpu_uuids(comm::Communicator& comm, int device) {
  GpuUuid mine{};
#ifdef COMMSGD_WITH_CUDA_COMM
  std::optional<std::string> error;
  cudaDeviceProp properties{};
  if (const cudaError_t status = cudaGetDeviceProperties(&properties, device);
      status != cudaSuccess) {
    error = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(status);
    kernels::cuda::discard(status);
  }
  agree_on_setup(comm, error);
  static_assert(sizeof properties.uuid.bytes == sizeof mine);
  std::memcpy(mine.data(), properties.uuid.bytes, sizeof mine);
#else
  (void)device;
  throw std::logic_error("this commsgd-train was built without CUDA");
#endif
  std::vector<GpuUuid> all(static_cast<std::size_t>(comm.size()));
  comm.allgather(mine.data(), all.data(), sizeof mine);
  return all;
}

std::string attach_device_backend(comm::Communicator& comm, int device, DeviceBackendKind kind) {
#ifdef COMMSGD_WITH_CUDA_COMM
  // A device back end works on the device current when it is made; LibTorch sets the device
  // only around its own calls.
  kernels::cuda::check(cudaSetDevice(device), "cudaSetDevice");
#ifdef COMMSGD_WITH_NCCL
  if (kind == DeviceBackendKind::nccl) {
    comm.attach_device_backend(comm::make_nccl_backend(comm));
    return "nccl";
  }
#endif
  comm.attach_device_backend(std::make_unique<comm::StagedBackend>(comm));
  return "mpi-staged";
#else
  (void)comm, (void)device, (void)kind;
  throw std::logic_error("this commsgd-train was built without CUDA");
#endif
}

}  // namespace commsgd::trainer
