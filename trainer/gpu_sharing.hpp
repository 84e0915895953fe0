// Whether the ranks of a job drive GPUs of their own: NCCL takes one rank per GPU. Decided from
// the GPUs' UUIDs, not their indices: a launcher that binds one GPU to each rank (Slurm's
// --gpu-bind=single:1, a CUDA_VISIBLE_DEVICES per rank) shows every rank its GPU as device 0,
// and a node's ranks all see as many devices as GPUs were bound to them, one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace commsgd::trainer {

// A GPU's UUID (cudaDeviceProp::uuid; a MIG instance has one of its own).
using GpuUuid = std::array<std::uint8_t, 16>;

// Two ranks that drive one GPU.
struct SharedGpu {
  int first_rank = 0;
  int second_rank = 0;
};

// The lowest pair of ranks (by the second, then the first) whose GPUs are one, given each rank's
// GPU in rank order; none when every rank has a GPU of its own.
std::optional<SharedGpu> find_shared_gpu(std::span<const GpuUuid> gpu_of_rank);

// As nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string gpu_uuid_text(const GpuUuid& uuid);

// The device back end a job's buffers in GPU memory take: NCCL where every rank drives a GPU of
// its own and no link is emulated; else the staged one, through host memory over MPI. NCCL moves
// device buffers itself, past the host calls that --emulate-link-mbps throttles, so with NCCL an
// emulated slow link would run at full speed, silently.
enum class DeviceBackendKind { nccl, staged };
DeviceBackendKind device_backend_for(bool gpu_shared, bool link_emulated);

}  // namespace commsgd::trainer
