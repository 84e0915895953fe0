#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// A device back end that carries device buffers over the host communicator: each call copies
// what it sends to page-locked host memory, runs the host collective, and copies what arrived
// back to the device, waiting for the stream on the way. For ranks that share a GPU (NCCL takes
// one rank per device) and for MPI-only interconnects. The algorithms' work stays on the GPU, so
// what crosses the bus is what crosses the network: a sparse set's k entries, not d floats.
class StagedBackend final : public DeviceBackend {
 public:
  // Collective over `host` (it duplicates it: the staged calls are counted once, by the front).
  explicit StagedBackend(Communicator& host);
  ~StagedBackend() override;
  StagedBackend(const StagedBackend&) = delete;
  StagedBackend& operator=(const StagedBackend&) = delete;

  void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                 void* stream) override;
  void allgather(const void* send, void* recv, std::size_t bytes_per_rank, void* stream) override;
  void allgatherv(const void* send, void* recv, std::span<const std::size_t> bytes_per_rank,
                  void* stream) override;
  void broadcast(void* buffer, std::size_t bytes, int root, void* stream) override;
  void send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                    void* stream) override;
  // Every call has waited for its stream already.
  void synchronize(void*) override {}
  std::unique_ptr<DeviceBackend> duplicate(Communicator& host) override;
  void abort() noexcept override {}

 private:
  // Page-locked host memory of at least `bytes`, kept for the next call (contents not kept).
  std::byte* host_memory(std::size_t bytes);

  std::unique_ptr<Communicator> host_;
  std::byte* pinned_ = nullptr;
  std::size_t pinned_bytes_ = 0;
};

}  // namespace commsgd::comm
