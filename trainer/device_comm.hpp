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
// end: NCCL where every rank has a GPU of its own (`own_gpu`, the same on every rank, and NCCL
// built), else the staged back end over comm's MPI (NCCL takes one rank per device). Returns
// which one, as the run record's backend column names it: "nccl" or "mpi-staged". Throws
// std::logic_error in a build without CUDA.
std::string attach_device_backend(comm::Communicator& comm, int device, bool own_gpu);

}  // namespace commsgd::trainer
