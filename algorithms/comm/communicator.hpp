#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/buffer.hpp"

namespace commsgd::comm {

using kernels::Buffer;
using kernels::kHost;
using kernels::Memory;
using kernels::Place;

// f16 (IEEE binary16) and bf16 are float gradients on the wire at half the bytes, held as their
// bits (kernels/half_precision.hpp); only ReduceOp::sum applies to them.
enum class DataType { f32, f64, i64, u64, f16, bf16 };
enum class ReduceOp { sum, max, min };

template <class T>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::f64;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return DataType::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return DataType::u64;
  else
    static_assert(!sizeof(T), "no communicator data type for this element type");
}

std::size_t size_of(DataType);

// What this rank put on and took off the wire. Collectives are counted with the cost of the
// bandwidth-optimal algorithm (ring allreduce: 2(P-1)/P of the buffer each way; ring allgather:
// (P-1) blocks each way; broadcast: the buffer once), the model the cost formulas of docs/design.md
// ("Sparse family") use, so the counts do not depend on which algorithm the MPI library picked at
// run time. Point-to-point messages are counted exactly, one per send and one per receive.
struct CommCounters {
  std::uint64_t calls = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};

// Bytes on the wire, counted as CommCounters counts them.
struct Traffic {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};

// Where a rank sits: how many ranks share its node, and over how many nodes the job spans.
struct Placement {
  int local_rank = 0;
  int local_size = 1;
  int nodes = 1;
};

// The buffers of an exchange, sent as one message each.
using MessageParts = std::span<const std::span<const std::byte>>;

// One message of a send_receive round: `bytes` bytes to or from `peer`.
struct Outgoing {
  const void* data;
  std::size_t bytes;
  int peer;
};
struct Incoming {
  void* data;
  std::size_t bytes;
  int peer;
};

// A 64-bit counter every rank can add to atomically without the others taking part (MPI
// one-sided Fetch_and_op), e.g. a global iteration budget. Made and released collectively.
class SharedCounter {
 public:
  virtual ~SharedCounter() = default;
  // Adds `value` and returns what the counter held before.
  virtual std::int64_t fetch_add(std::int64_t value) = 0;
  // Collective: every rank releases the counter together.
  virtual void release() = 0;
};

class Communicator;

// The back end for buffers in CUDA memory (NCCL: nccl_backend.hpp). Each call is enqueued on the
// stream passed with it (a cudaStream_t) and the host does not wait for it; synchronize() waits,
// within the wait limit (work.hpp), so that a peer that never comes ends in an error, not a hang.
// Sizes are known on both sides: a device receiver cannot be handed a message of unknown size.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                         void* stream) = 0;
  virtual void allgather(const void* send, void* recv, std::size_t bytes_per_rank,
                         void* stream) = 0;
  virtual void allgatherv(const void* send, void* recv, std::span<const std::size_t> bytes_per_rank,
                          void* stream) = 0;
  virtual void broadcast(void* buffer, std::size_t bytes, int root, void* stream) = 0;
  virtual void send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                            void* stream) = 0;
  virtual void synchronize(void* stream) = 0;
  // A back end of its own over `host`, a duplicate of the communicator this one serves.
  // Collective.
  virtual std::unique_ptr<DeviceBackend> duplicate(Communicator& host) = 0;
  // Stops this rank's work that waits on peers at once, without waiting for them: before the job
  // is ended, or when the rank fails. A back end destroyed without it may wait for its peers.
  virtual void abort() noexcept = 0;
};

// One front over two back ends, in the manner of c10d's ProcessGroup with a backend per device
// type: buffers in host memory go to the host back end (MPI, or the throttled emulation over
// it: the do_* hooks of the subclass), buffers in CUDA memory to the attached DeviceBackend
// (NCCL), chosen by the place each call is given. The public calls are the one dispatch point:
// they count traffic and register their wait on peers (a PendingWait, work.hpp) whichever back end
// moves the bytes, so both are counted and watched the same way.
class Communicator {
 public:
  // Destroyed while an exception unwinds the stack (a failure on this rank), the device back end
  // is aborted rather than finalized: finalizing waits for peers that may have stopped, for up
  // to the whole wait limit, once per communicator (each communication thread has one).
  virtual ~Communicator();
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // `place`: where the buffers are, which picks the back end (on a device, with its stream).
  void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op, Place place = kHost);
  // Every rank contributes bytes_per_rank bytes; recv holds size() blocks in rank order.
  void allgather(const void* send, void* recv, std::size_t bytes_per_rank, Place place = kHost);
  // Like allgather, but rank r contributes bytes_per_rank[r] bytes (every rank passes the same
  // sizes, e.g. from an allgather of counts); recv holds the blocks back to back in rank order.
  void allgatherv(const void* send, void* recv, std::span<const std::size_t> bytes_per_rank,
                  Place place = kHost);
  void broadcast(void* buffer, std::size_t bytes, int root, Place place = kHost);
  // Every rank's calling thread meets; work enqueued on a device is not waited for (synchronize).
  void barrier();
  // Waits for the device work this communicator enqueued on `place`'s stream (nothing for the
  // host, whose calls return done).
  void synchronize(Place place);

  // Point to point. The receiver need not know the size: `recv` is resized to what arrived.
  // Messages between one pair of ranks arrive in the order they were sent.
  void send(const void* data, std::size_t bytes, int peer);
  void receive(std::vector<std::byte>& recv, int peer);
  // Whether a message from `peer` (or from anyone, kAnyPeer) is waiting to be received; returns
  // its sender without blocking. For servers that must also notice when to stop.
  static constexpr int kAnyPeer = -1;
  std::optional<int> probe(int peer) { return do_probe(peer); }
  // Sends to and receives from `peer` at once, so two ranks exchanging cannot deadlock.
  void exchange(const void* send, std::size_t bytes, int peer, std::vector<std::byte>& recv);
  // The same with the send in parts, each a message of its own read where it lies (gTop-k's
  // values and indices, without copying them into one buffer first). The peer sends as many
  // parts; recv holds what arrived, back to back in order.
  void exchange(MessageParts send, int peer, std::vector<std::byte>& recv);
  // Posts every send and receive of a round at once and waits for all of them (on a device:
  // enqueues them as one group), so no pattern of peers can deadlock (gossip mixing). Sizes are
  // known on both sides.
  void send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                    Place place = kHost);

  // A new communicator over the same ranks whose traffic never mixes with this one's, with a
  // duplicate of the device back end if there is one: for a communication thread (needs
  // MPI_THREAD_MULTIPLE). Collective. Its traffic counts in this one's traffic_with_duplicates().
  std::unique_ptr<Communicator> duplicate();
  // The same, counted apart: for a device back end's host side, whose calls move the bytes this
  // communicator has counted already.
  std::unique_ptr<Communicator> duplicate_apart();

  // Buffers in CUDA memory go to `backend` from now on. Not collective itself; making the back
  // end usually is.
  void attach_device_backend(std::unique_ptr<DeviceBackend> backend);
  bool has_device_backend() const { return device_ != nullptr; }
  // Stops the device back end's work on peers at once, never to be finalized (which waits for
  // peers that may have stopped): after a failure. Device calls fail from then on.
  void abort_device_backend() noexcept {
    if (device_ != nullptr) device_->abort();
  }
  // Collective: a counter, starting at 0, that lives on rank 0.
  virtual std::unique_ptr<SharedCounter> shared_counter() = 0;

  // Ends every rank of the job: the one way out that cannot leave a peer blocked in a collective.
  [[noreturn]] void abort(int exit_code);

  template <class T>
  void allreduce(Buffer<T> x, ReduceOp op) {
    allreduce(x.data(), x.size(), data_type_of<std::remove_const_t<T>>(), op, x.place());
  }
  template <class T>
  void broadcast(Buffer<T> x, int root) {
    broadcast(x.data(), x.size() * sizeof(T), root, x.place());
  }
  template <class T, std::size_t N>
  void allreduce(std::span<T, N> x, ReduceOp op) {
    allreduce(Buffer<T>(x), op);
  }
  template <class T, std::size_t N>
  void broadcast(std::span<T, N> x, int root) {
    broadcast(Buffer<T>(x), root);
  }
  // Root's text on every rank, whatever its length there.
  void broadcast(std::string& text, int root);

  // What the calls that returned have moved; a call that throws counts nothing.
  const CommCounters& counters() const { return counters_; }
  // The bytes of this communicator and of every communicator duplicated from it (and from
  // those), whichever thread called them: what an algorithm moved through the communicator it
  // was given, its communication engine's included. Readable from any thread.
  Traffic traffic_with_duplicates() const;

 protected:
  virtual std::unique_ptr<Communicator> do_duplicate() = 0;
  [[noreturn]] virtual void do_abort(int exit_code) = 0;
  virtual void do_allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) = 0;
  virtual void do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) = 0;
  virtual void do_allgatherv(const void* send, void* recv,
                             std::span<const std::size_t> bytes_per_rank) = 0;
  virtual void do_broadcast(void* buffer, std::size_t bytes, int root) = 0;
  virtual void do_barrier() = 0;
  virtual void do_send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void do_receive(std::vector<std::byte>& recv, int peer) = 0;
  virtual std::optional<int> do_probe(int peer) = 0;
  virtual void do_exchange(MessageParts send, int peer, std::vector<std::byte>& recv) = 0;
  virtual void do_send_receive(std::span<const Outgoing> sends,
                               std::span<const Incoming> receives) = 0;

 private:
  // The device back end for a call on `place`, or null for the host.
  DeviceBackend* device_for(Place place, const char* call) const;

  // Every call's count goes here, to counters_ and to the family's traffic.
  void tally(const CommCounters& moved);

  // The traffic of this communicator and its duplicates, shared by them all.
  struct FamilyTraffic {
    std::atomic<std::uint64_t> bytes_sent = 0;
    std::atomic<std::uint64_t> bytes_received = 0;
  };

  CommCounters counters_;
  std::shared_ptr<FamilyTraffic> family_ = std::make_shared<FamilyTraffic>();
  std::unique_ptr<DeviceBackend> device_;
  // How many exceptions were in flight when this communicator was made: more at its destruction
  // means it is destroyed by unwinding.
  int exceptions_at_construction_ = std::uncaught_exceptions();
};

}  // namespace commsgd::comm
