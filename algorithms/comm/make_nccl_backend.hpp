// NCCL's device back end (nccl_backend.hpp) without NCCL's header, for code whose include path
// may hold another nccl.h first: a CUDA LibTorch's folders come before NCCL's in the trainer's,
// and the CUDA toolkit may ship an nccl.h of another version than the NCCL found. Only files
// that include the NCCL found (nccl_backend.cpp, the device tests) see its declarations.
#pragma once

#include <memory>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// Collective over `host`: NcclBackend(host).
std::unique_ptr<DeviceBackend> make_nccl_backend(Communicator& host);

}  // namespace commsgd::comm
