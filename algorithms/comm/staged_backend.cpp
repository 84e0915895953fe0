#include "algorithms/comm/staged_backend.hpp"

#include <numeric>

#include "kernels/cuda/device_array.hpp"

namespace commsgd::comm {
namespace {

using kernels::cuda::check;

cudaStream_t as_stream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

void to_host(void* host, const void* device, std::size_t bytes, void* stream) {
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

void to_device(void* device, const void* host, std::size_t bytes, void* stream) {
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, as_stream(stream)),
        "cudaMemcpyAsync");
  // The host memory is reused by the next call.
  check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

}  // namespace

// Apart: the bytes it moves are those the communicator it serves has counted.
StagedBackend::StagedBackend(Communicator& host) : host_(host.duplicate_apart()) {}

StagedBackend::~StagedBackend() {
  if (pinned_ != nullptr) kernels::cuda::discard(cudaFreeHost(pinned_));
}

std::unique_ptr<DeviceBackend> StagedBackend::duplicate(Communicator& host) {
  return std::make_unique<StagedBackend>(host);
}

std::byte* StagedBackend::host_memory(std::size_t bytes) {
  if (bytes > pinned_bytes_) {
    if (pinned_ != nullptr) check(cudaFreeHost(pinned_), "cudaFreeHost");
    pinned_ = nullptr;
    pinned_bytes_ = 0;
    void* memory = nullptr;
    check(cudaMallocHost(&memory, bytes), "cudaMallocHost");
    pinned_ = static_cast<std::byte*>(memory);
    pinned_bytes_ = bytes;
  }
  return pinned_;
}

void StagedBackend::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                              void* stream) {
  const std::size_t bytes = count * size_of(type);
  std::byte* staged = host_memory(bytes);
  to_host(staged, buffer, bytes, stream);
  host_->allreduce(staged, count, type, op);
  to_device(buffer, staged, bytes, stream);
}

void StagedBackend::allgather(const void* send, void* recv, std::size_t bytes_per_rank,
                              void* stream) {
  const std::size_t all = bytes_per_rank * static_cast<std::size_t>(host_->size());
  std::byte* staged = host_memory(bytes_per_rank + all);
  to_host(staged, send, bytes_per_rank, stream);
  host_->allgather(staged, staged + bytes_per_rank, bytes_per_rank);
  to_device(recv, staged + bytes_per_rank, all, stream);
}

void StagedBackend::allgatherv(const void* send, void* recv,
                               std::span<const std::size_t> bytes_per_rank, void* stream) {
  const std::size_t mine = bytes_per_rank[static_cast<std::size_t>(host_->rank())];
  const std::size_t all =
      std::accumulate(bytes_per_rank.begin(), bytes_per_rank.end(), std::size_t{0});
  std::byte* staged = host_memory(mine + all);
  to_host(staged, send, mine, stream);
  host_->allgatherv(staged, staged + mine, bytes_per_rank);
  to_device(recv, staged + mine, all, stream);
}

void StagedBackend::broadcast(void* buffer, std::size_t bytes, int root, void* stream) {
  std::byte* staged = host_memory(bytes);
  if (host_->rank() == root) to_host(staged, buffer, bytes, stream);
  host_->broadcast(staged, bytes, root);
  if (host_->rank() != root) to_device(buffer, staged, bytes, stream);
}

// Every message gets its own stretch of the host memory: sends first, then receives.
void StagedBackend::send_receive(std::span<const Outgoing> sends,
                                 std::span<const Incoming> receives, void* stream) {
  std::size_t total = 0;
  for (const Outgoing& m : sends) total += m.bytes;
  for (const Incoming& m : receives) total += m.bytes;
  std::byte* staged = host_memory(total);
  std::vector<Outgoing> host_sends;
  std::vector<Incoming> host_receives;
  std::byte* at = staged;
  for (const Outgoing& m : sends) {
    check(cudaMemcpyAsync(at, m.data, m.bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
          "cudaMemcpyAsync");
    host_sends.push_back({at, m.bytes, m.peer});
    at += m.bytes;
  }
  check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
  for (const Incoming& m : receives) {
    host_receives.push_back({at, m.bytes, m.peer});
    at += m.bytes;
  }
  host_->send_receive(host_sends, host_receives);
  for (std::size_t i = 0; i < receives.size(); ++i) {
    check(cudaMemcpyAsync(receives[i].data, host_receives[i].data, receives[i].bytes,
                          cudaMemcpyHostToDevice, as_stream(stream)),
          "cudaMemcpyAsync");
  }
  check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

}  // namespace commsgd::comm
