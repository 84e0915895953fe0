#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/comm/mpi_communicator.hpp"

namespace commsgd::comm {

// The GPU backend: every buffer passed to it is a device pointer on the device that was current
// (cudaSetDevice, which the caller does, one device per rank) when it was made. All NCCL work is
// enqueued on the caller's stream and nothing waits for it on the host: the caller synchronizes
// its stream when it needs a result. The MPI communicator it is made from is the launcher and the
// bootstrap (the unique id travels over it) and serves what NCCL cannot: barrier, shared_counter,
// abort. It must outlive this communicator.
//
// The communicator is non-blocking (ncclConfig_t::blocking = 0): whatever NCCL does on the host
// (creation, connecting to a peer on first use, finalizing) is polled and, once `timeout` has
// passed, the communicator is aborted and the call throws std::runtime_error, instead of hanging
// on a peer that never comes. After any NCCL or CUDA error the communicator is aborted; every
// error is a std::runtime_error naming the call. A collective that waits on the GPU is seen only
// by what waits for the stream: barrier() applies the same timeout.
//
// send, receive, probe and exchange throw std::logic_error: they hand the receiver a host vector
// sized by whatever arrived, and NCCL cannot receive a message of unknown size. Emulating them
// (sizes over MPI, payload over NCCL into device staging, a copy to the host) would cost a host
// synchronization per message and mix device senders with host receivers; callers that know the
// sizes on both sides use send_receive, the others keep the MPI communicator.
class NcclCommunicator final : public Communicator {
 public:
  // Collective over `mpi`. Throws std::invalid_argument unless timeout > 0.
  NcclCommunicator(MpiCommunicator& mpi, cudaStream_t stream, std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;

  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  [[noreturn]] void abort(int exit_code) override;

  // A new NCCL communicator bootstrapped over a duplicate of the MPI communicator, which it owns:
  // a communication thread's barrier must not share an MPI communicator with the thread that made
  // it, and once it has one, a fresh unique id over it is the constructor's own path (rather than
  // ncclCommSplit). Collective; needs MPI_THREAD_MULTIPLE.
  //
  // duplicate() keeps this stream, so a bucket's allreduce is ordered after the kernels that
  // wrote it with no event. NCCL kernels run in stream order, though: two threads calling the two
  // communicators must do so in the same order on every rank, or one rank's kernel waits behind
  // a kernel its peer has not launched yet (deadlock). duplicate(stream) gives the copy a stream
  // of its own; the caller then orders the streams with events.
  std::unique_ptr<Communicator> duplicate() override;
  std::unique_ptr<NcclCommunicator> duplicate(cudaStream_t stream);
  std::unique_ptr<SharedCounter> shared_counter() override { return mpi_.shared_counter(); }

 protected:
  void do_allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) override;
  void do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) override;
  void do_allgatherv(const void* send, void* recv,
                     std::span<const std::size_t> bytes_per_rank) override;
  void do_broadcast(void* buffer, std::size_t bytes, int root) override;
  // Synchronizes the stream first (a barrier means everything before it is done): the one host
  // synchronization of this class.
  void do_barrier() override;
  void do_send(const void* data, std::size_t bytes, int peer) override;
  void do_receive(std::vector<std::byte>& recv, int peer) override;
  std::optional<int> do_probe(int peer) override;
  void do_exchange(const void* send, std::size_t bytes, int peer,
                   std::vector<std::byte>& recv) override;
  void do_send_receive(std::span<const Outgoing> sends,
                       std::span<const Incoming> receives) override;

 private:
  // `owned` is null, or the duplicate `mpi` refers to.
  NcclCommunicator(std::unique_ptr<Communicator> owned, Communicator& mpi, cudaStream_t stream,
                   std::chrono::milliseconds timeout);

  // Waits out a call that returned ncclInProgress; throws (aborting) if it fails or times out.
  void settle(ncclResult_t result, const char* call);
  // Ends a group whose first failed enqueue (or ncclSuccess) is `enqueued`.
  void end_group(ncclResult_t enqueued, const char* call);
  // Polls `done` until it returns true or the timeout passes.
  template <class Done>
  void wait_until(const char* call, Done&& done);
  // Aborts the NCCL communicator and throws std::runtime_error naming `call`.
  [[noreturn]] void fail(const char* call, const std::string& why);

  std::unique_ptr<Communicator> owned_;
  Communicator& mpi_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace commsgd::comm
