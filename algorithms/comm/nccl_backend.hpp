#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// The device back end of a Communicator (attach_device_backend): every buffer passed to it is a
// device pointer on the device that was current (cudaSetDevice, which the caller does, one
// device per rank) when it was made. Each call is enqueued on the stream it is given and nothing
// waits for it on the host; synchronize() does, for one stream. The host communicator it is
// made over carries the bootstrap (the unique id) and serves what NCCL has no call for (barrier,
// shared_counter, messages of unknown size); it must outlive this back end.
//
// The NCCL communicator is non-blocking (ncclConfig_t::blocking = 0): whatever NCCL does on the
// host (creation, connecting to a peer on first use, finalizing) is polled and, once the watchdog
// (watchdog.hpp) ends the wait at the wait limit, the communicator is aborted and the call throws
// std::runtime_error, instead of hanging on a peer that never comes. After any NCCL or CUDA error
// the communicator is aborted; every error is a std::runtime_error naming the call. A collective
// that waits on the GPU is seen only by what waits for the stream: synchronize() applies the same
// limit.
//
// abort() may come from another thread (the stall watchdog, an engine's stop) while the owning
// thread polls: every use of the NCCL communicator and its abort take one lock, so the owner never
// touches a communicator NCCL has freed; its next call throws, naming the abort.
class NcclBackend final : public DeviceBackend {
 public:
  // Collective over `host`.
  explicit NcclBackend(Communicator& host);
  ~NcclBackend() override;
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;

  void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                 void* stream) override;
  void allgather(const void* send, void* recv, std::size_t bytes_per_rank, void* stream) override;
  void allgatherv(const void* send, void* recv, std::span<const std::size_t> bytes_per_rank,
                  void* stream) override;
  void broadcast(void* buffer, std::size_t bytes, int root, void* stream) override;
  void send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                    void* stream) override;
  // Polls the stream rather than calling cudaStreamSynchronize, so that a collective stuck on
  // the GPU (a peer that never launched its side) is aborted once the wait limit passes, and an
  // NCCL network error ends the wait at once.
  void synchronize(void* stream) override;
  // A fresh unique id over `host` (a duplicate made for a communication thread), rather than
  // ncclCommSplit: the constructor's own path. NCCL kernels run in stream order: two threads
  // using two back ends on one stream must call them in the same order on every rank, or one
  // rank's kernel waits behind a kernel its peer has not launched yet; give each thread a stream
  // of its own and order the streams with events.
  std::unique_ptr<DeviceBackend> duplicate(Communicator& host) override;
  void abort() noexcept override;

 private:
  int rank() const { return host_.rank(); }
  int size() const { return host_.size(); }
  // `nccl_call(comm)` under the lock abort() takes; throws if the communicator was aborted.
  template <class Call>
  ncclResult_t with_comm(const char* call, Call&& nccl_call);
  // The communicator's asynchronous error (ncclInProgress while a call is under way).
  ncclResult_t async_error(const char* call);
  // Waits out a call that returned ncclInProgress; throws (aborting) if it fails or times out.
  void settle(ncclResult_t result, const char* call);
  // One NCCL group around `enqueue(comm)`, which returns its first failed enqueue (or
  // ncclSuccess), settled.
  template <class Enqueue>
  void group(const char* call, Enqueue&& enqueue);
  // Polls `done` until it returns true, or fails the call once the watchdog ends the wait.
  template <class Done>
  void wait_until(const char* call, Done&& done);
  // Aborts the NCCL communicator and throws std::runtime_error naming `call`.
  [[noreturn]] void fail(const char* call, const std::string& why);

  Communicator& host_;
  std::mutex mutex_;           // over comm_: its every use, and its abort
  ncclComm_t comm_ = nullptr;  // null once aborted
};

}  // namespace commsgd::comm
