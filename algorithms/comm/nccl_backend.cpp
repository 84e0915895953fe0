#include "algorithms/comm/nccl_backend.hpp"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "algorithms/comm/make_nccl_backend.hpp"
#include "algorithms/comm/watchdog.hpp"
#include "algorithms/comm/work.hpp"
#include "kernels/cuda/device_array.hpp"

namespace commsgd::comm {
namespace {

ncclDataType_t to_nccl(DataType type) {
  switch (type) {
    case DataType::f32:
      return ncclFloat32;
    case DataType::f64:
      return ncclFloat64;
    case DataType::i64:
      return ncclInt64;
    case DataType::u64:
      return ncclUint64;
    case DataType::f16:
      return ncclFloat16;
    case DataType::bf16:
      return ncclBfloat16;
  }
  throw std::invalid_argument("unknown communicator data type");
}

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::min:
      return ncclMin;
  }
  throw std::invalid_argument("unknown reduction");
}

constexpr const char* kAborted = "the NCCL communicator was aborted (a failure, or the job ending)";

// NCCL makes progress in threads of its own: polling no more often than this leaves them a core.
constexpr auto kPollInterval = std::chrono::microseconds(50);

cudaStream_t as_stream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

}  // namespace

std::unique_ptr<DeviceBackend> make_nccl_backend(Communicator& host) {
  return std::make_unique<NcclBackend>(host);
}

NcclBackend::NcclBackend(Communicator& host) : host_(host) {
  // Rank 0's id travels with how getting it went: a failure there must end every rank's wait in
  // the broadcast, not only rank 0's.
  struct {
    ncclUniqueId id;
    ncclResult_t result;
  } bootstrap{};
  if (rank() == 0) bootstrap.result = ncclGetUniqueId(&bootstrap.id);
  host_.broadcast(&bootstrap, sizeof bootstrap, 0);
  if (rank() == 0) settle(bootstrap.result, "ncclGetUniqueId");
  if (bootstrap.result != ncclSuccess) {
    fail("ncclGetUniqueId",
         std::string("failed on rank 0: ") + ncclGetErrorString(bootstrap.result));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t created = ncclSuccess;
  {
    const std::lock_guard lock(mutex_);
    created = ncclCommInitRankConfig(&comm_, size(), bootstrap.id, rank(), &config);
  }
  settle(created, "ncclCommInitRankConfig");
}

NcclBackend::~NcclBackend() {
  // The ordinary end: finalizing flushes what is still queued and waits for the peers, so it
  // gets the wait limit too. A destructor cannot throw; one that fails has been aborted by settle,
  // and one aborted before (after an error, by another thread, by its Communicator's unwinding)
  // has nothing left to end.
  try {
    settle(with_comm("ncclCommFinalize", ncclCommFinalize), "ncclCommFinalize");
    with_comm("ncclCommDestroy", ncclCommDestroy);
  } catch (const std::exception&) {
  }
}

void NcclBackend::abort() noexcept {
  const std::lock_guard lock(mutex_);
  if (comm_ != nullptr) ncclCommAbort(std::exchange(comm_, nullptr));
}

template <class Call>
ncclResult_t NcclBackend::with_comm(const char* call, Call&& nccl_call) {
  const std::lock_guard lock(mutex_);
  if (comm_ == nullptr) throw std::runtime_error(std::string(call) + ": " + kAborted);
  return nccl_call(comm_);
}

std::unique_ptr<DeviceBackend> NcclBackend::duplicate(Communicator& host) {
  return std::make_unique<NcclBackend>(host);
}

void NcclBackend::fail(const char* call, const std::string& why) {
  std::string message = std::string(call) + ": " + why;
  const std::lock_guard lock(mutex_);
  if (comm_ != nullptr) {
    ncclCommAbort(std::exchange(comm_, nullptr));
    message += " (NCCL communicator aborted)";
  }
  throw std::runtime_error(message);
}

template <class Done>
void NcclBackend::wait_until(const char* call, Done&& done) {
  if (done()) return;
  const WatchedWait watched;
  while (!done()) {
    if (const std::optional<std::string> limit = watched.ended()) {
      fail(call, "not done after " + *limit);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

ncclResult_t NcclBackend::async_error(const char* call) {
  ncclResult_t async = ncclSuccess;
  const ncclResult_t queried =
      with_comm(call, [&](ncclComm_t comm) { return ncclCommGetAsyncError(comm, &async); });
  return queried != ncclSuccess ? queried : async;
}

void NcclBackend::settle(ncclResult_t result, const char* call) {
  wait_until(call, [&] {
    if (result == ncclInProgress) result = async_error(call);
    return result != ncclInProgress;
  });
  if (result == ncclSuccess) return;
  std::string why = ncclGetErrorString(result);
  // Read before the abort frees the communicator.
  with_comm(call, [&](ncclComm_t comm) {
    const char* detail = ncclGetLastError(comm);
    if (detail != nullptr && *detail != '\0') why += std::string(": ") + detail;
    return ncclSuccess;
  });
  fail(call, why);
}

// NCCL must see ncclGroupEnd even after a failed enqueue, and reports that failure best. The
// group is enqueued and ended under the lock: ncclGroupEnd launches on the communicator.
template <class Enqueue>
void NcclBackend::group(const char* call, Enqueue&& enqueue) {
  ncclResult_t started = ncclSuccess, enqueued = ncclSuccess, ended = ncclSuccess;
  with_comm(call, [&](ncclComm_t comm) {
    started = ncclGroupStart();
    if (started == ncclSuccess) {
      enqueued = enqueue(comm);
      ended = ncclGroupEnd();
    }
    return started;
  });
  settle(started, "ncclGroupStart");
  settle(enqueued, call);
  settle(ended, "ncclGroupEnd");
}

void NcclBackend::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                            void* stream) {
  // NCCL could take max and min of halves; refused as the MPI backend refuses them, so that no
  // run depends on the backend.
  if ((type == DataType::f16 || type == DataType::bf16) && op != ReduceOp::sum) {
    throw std::invalid_argument("half-precision allreduce: only sum is supported");
  }
  settle(with_comm("ncclAllReduce",
                   [&](ncclComm_t comm) {
                     return ncclAllReduce(buffer, buffer, count, to_nccl(type), to_nccl(op), comm,
                                          as_stream(stream));
                   }),
         "ncclAllReduce");
}

void NcclBackend::allgather(const void* send, void* recv, std::size_t bytes_per_rank,
                            void* stream) {
  settle(with_comm("ncclAllGather",
                   [&](ncclComm_t comm) {
                     return ncclAllGather(send, recv, bytes_per_rank, ncclUint8, comm,
                                          as_stream(stream));
                   }),
         "ncclAllGather");
}

// NCCL has no allgatherv: one broadcast per rank into its block, in one group (one launch). Every
// block then crosses the wire once per receiving rank, as allgatherv needs; padding the blocks to
// the largest for ncclAllGather would move (P-1)·max bytes to every rank, which is far more when
// the sizes differ (sparse gradients), and would need a scratch buffer and a compacting copy.
// An empty block costs nothing: NCCL discards zero-count collectives.
void NcclBackend::allgatherv(const void* send, void* recv,
                             std::span<const std::size_t> bytes_per_rank, void* stream) {
  group("ncclBroadcast", [&](ncclComm_t comm) {
    auto* block = static_cast<std::byte*>(recv);
    ncclResult_t enqueued = ncclSuccess;
    for (int root = 0; root < size() && enqueued == ncclSuccess; ++root) {
      const std::size_t bytes = bytes_per_rank[static_cast<std::size_t>(root)];
      enqueued = ncclBroadcast(root == rank() ? send : block, block, bytes, ncclUint8, root, comm,
                               as_stream(stream));
      block += bytes;
    }
    return enqueued;
  });
}

void NcclBackend::broadcast(void* buffer, std::size_t bytes, int root, void* stream) {
  settle(with_comm("ncclBroadcast",
                   [&](ncclComm_t comm) {
                     return ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm,
                                          as_stream(stream));
                   }),
         "ncclBroadcast");
}

void NcclBackend::synchronize(void* stream) {
  cudaError_t state = cudaErrorNotReady;
  wait_until("cudaStreamQuery", [&] {
    const ncclResult_t async = async_error("ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) settle(async, "ncclCommGetAsyncError");
    state = cudaStreamQuery(as_stream(stream));
    return !kernels::cuda::not_ready(state);
  });
  if (state != cudaSuccess) {
    kernels::cuda::discard(state);
    fail("cudaStreamQuery", cudaGetErrorString(state));
  }
}

// One group: NCCL starts every send and receive together, so no pattern of peers can deadlock,
// and messages between one pair of ranks are matched in the order they were posted.
void NcclBackend::send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                               void* stream) {
  group("ncclSend/ncclRecv", [&](ncclComm_t comm) {
    ncclResult_t enqueued = ncclSuccess;
    for (const Incoming& m : receives) {
      if (enqueued == ncclSuccess) {
        enqueued = ncclRecv(m.data, m.bytes, ncclUint8, m.peer, comm, as_stream(stream));
      }
    }
    for (const Outgoing& m : sends) {
      if (enqueued == ncclSuccess) {
        enqueued = ncclSend(m.data, m.bytes, ncclUint8, m.peer, comm, as_stream(stream));
      }
    }
    return enqueued;
  });
}

}  // namespace commsgd::comm
