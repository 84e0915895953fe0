#pragma once

#include <string>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "trainer/gpu_sharing.hpp"

namespace commsgd::trainer {

// Whether this commsgd-train can communicate buffers in CUDA memory (built with CUDA).
bool device_comm_built();

// Collective: the UUID of every rank's CUDA device `device`, in rank order. Fails setup on every
// rank (SetupFailed) if one cannot read its own. Throws std::logic_error in a build without CUDA.
std::vector<GpuUuid> gather_gpu_uuids(comm::Communicator& comm, int device);

// Collective: makes CUDA device `device` this rank's current one and gives `comm` a device back
// end: `kind` (the same on every rank; device_backend_for), the staged one over comm's MPI where
// NCCL was not built. Returns which one, as the run record's backend column names it: "nccl" or
// "mpi-staged". Throws std::logic_error in a build without CUDA.
std::string attach_device_backend(comm::Communicator& comm, int device, DeviceBackendKind kind);

}  // namespace commsgd::trainer
