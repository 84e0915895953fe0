#include "algorithms/comm/communicator.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "algorithms/comm/work.hpp"

namespace commsgd::comm {

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::f16:
    case DataType::bf16:
      return 2;
    case DataType::f32:
      return 4;
    case DataType::f64:
    case DataType::i64:
    case DataType::u64:
      return 8;
  }
  return 0;
}

Communicator::~Communicator() {
  if (device_ != nullptr && std::uncaught_exceptions() > exceptions_at_construction_) {
    device_->abort();
  }
}

DeviceBackend* Communicator::device_for(Place place, const char* call) const {
  if (place.memory == Memory::host) return nullptr;
  if (device_ == nullptr) {
    throw std::logic_error(std::string(call) +
                           ": a buffer in CUDA memory, and this communicator has no device back "
                           "end (commsgd-train attaches NCCL with --device cuda)");
  }
  return device_.get();
}

void Communicator::attach_device_backend(std::unique_ptr<DeviceBackend> backend) {
  device_ = std::move(backend);
}

std::unique_ptr<Communicator> Communicator::duplicate() {
  std::unique_ptr<Communicator> copy = duplicate_apart();
  copy->family_ = family_;
  return copy;
}

std::unique_ptr<Communicator> Communicator::duplicate_apart() {
  std::unique_ptr<Communicator> copy = do_duplicate();
  if (device_ != nullptr) copy->device_ = device_->duplicate(*copy);
  return copy;
}

Traffic Communicator::traffic_with_duplicates() const {
  return {family_->bytes_sent.load(std::memory_order_relaxed),
          family_->bytes_received.load(std::memory_order_relaxed)};
}

void Communicator::tally(const CommCounters& moved) {
  counters_.calls += moved.calls;
  counters_.messages_sent += moved.messages_sent;
  counters_.messages_received += moved.messages_received;
  counters_.bytes_sent += moved.bytes_sent;
  counters_.bytes_received += moved.bytes_received;
  family_->bytes_sent.fetch_add(moved.bytes_sent, std::memory_order_relaxed);
  family_->bytes_received.fetch_add(moved.bytes_received, std::memory_order_relaxed);
}

void Communicator::abort(int exit_code) {
  if (device_ != nullptr) device_->abort();
  do_abort(exit_code);
  std::abort();  // unreachable: the back end's abort ends the process
}

void Communicator::synchronize(Place place) {
  if (DeviceBackend* device = device_for(place, "synchronize")) {
    const PendingWait wait("synchronize", size());
    device->synchronize(place.stream);
  }
}

void Communicator::broadcast(std::string& text, int root) {
  std::int64_t size = static_cast<std::int64_t>(text.size());
  broadcast(std::span(&size, 1), root);
  text.resize(static_cast<std::size_t>(size));
  broadcast(text.data(), text.size(), root);
}

void Communicator::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op,
                             Place place) {
  const PendingWait wait("allreduce", size());
  const std::uint64_t p = static_cast<std::uint64_t>(size());
  const std::uint64_t wire = 2 * (p - 1) * count * size_of(type) / p;
  if (DeviceBackend* device = device_for(place, "allreduce")) {
    device->allreduce(buffer, count, type, op, place.stream);
  } else {
    do_allreduce(buffer, count, type, op);
  }
  tally({.calls = 1, .bytes_sent = wire, .bytes_received = wire});
}

void Communicator::allgather(const void* send, void* recv, std::size_t bytes_per_rank,
                             Place place) {
  const PendingWait wait("allgather", size());
  const std::uint64_t wire = static_cast<std::uint64_t>(size() - 1) * bytes_per_rank;
  if (DeviceBackend* device = device_for(place, "allgather")) {
    device->allgather(send, recv, bytes_per_rank, place.stream);
  } else {
    do_allgather(send, recv, bytes_per_rank);
  }
  tally({.calls = 1, .bytes_sent = wire, .bytes_received = wire});
}

void Communicator::allgatherv(const void* send, void* recv,
                              std::span<const std::size_t> bytes_per_rank, Place place) {
  const PendingWait wait("allgatherv", size());
  const std::uint64_t mine = bytes_per_rank[static_cast<std::size_t>(rank())];
  std::uint64_t all = 0;
  for (const std::size_t b : bytes_per_rank) all += b;
  if (DeviceBackend* device = device_for(place, "allgatherv")) {
    device->allgatherv(send, recv, bytes_per_rank, place.stream);
  } else {
    do_allgatherv(send, recv, bytes_per_rank);
  }
  tally({.calls = 1,
         .bytes_sent = static_cast<std::uint64_t>(size() - 1) * mine,
         .bytes_received = all - mine});
}

void Communicator::broadcast(void* buffer, std::size_t bytes, int root, Place place) {
  const PendingWait wait("broadcast", size());
  if (DeviceBackend* device = device_for(place, "broadcast")) {
    device->broadcast(buffer, bytes, root, place.stream);
  } else {
    do_broadcast(buffer, bytes, root);
  }
  const std::uint64_t moved = size() > 1 ? bytes : 0;
  tally({.calls = 1,
         .bytes_sent = rank() == root ? moved : 0,
         .bytes_received = rank() == root ? 0 : moved});
}

void Communicator::barrier() {
  const PendingWait wait("barrier", size());
  do_barrier();
  tally({.calls = 1});
}

void Communicator::send(const void* data, std::size_t bytes, int peer) {
  const PendingWait wait("send", size(), peer);
  do_send(data, bytes, peer);
  tally({.messages_sent = 1, .bytes_sent = bytes});
}

void Communicator::receive(std::vector<std::byte>& recv, int peer) {
  const PendingWait wait("receive", size(), peer);
  do_receive(recv, peer);
  tally({.messages_received = 1, .bytes_received = recv.size()});
}

void Communicator::exchange(const void* send, std::size_t bytes, int peer,
                            std::vector<std::byte>& recv) {
  const std::span<const std::byte> whole(static_cast<const std::byte*>(send), bytes);
  exchange(MessageParts(&whole, 1), peer, recv);
}

void Communicator::exchange(MessageParts send, int peer, std::vector<std::byte>& recv) {
  const PendingWait wait("exchange", size(), peer);
  do_exchange(send, peer, recv);
  std::uint64_t sent = 0;
  for (const std::span<const std::byte> part : send) sent += part.size();
  tally({.messages_sent = send.size(),
         .messages_received = send.size(),
         .bytes_sent = sent,
         .bytes_received = recv.size()});
}

void Communicator::send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                                Place place) {
  const PendingWait wait("send_receive", size(), sends, receives);
  if (DeviceBackend* device = device_for(place, "send_receive")) {
    device->send_receive(sends, receives, place.stream);
  } else {
    do_send_receive(sends, receives);
  }
  CommCounters moved{.messages_sent = sends.size(), .messages_received = receives.size()};
  for (const Outgoing& m : sends) moved.bytes_sent += m.bytes;
  for (const Incoming& m : receives) moved.bytes_received += m.bytes;
  tally(moved);
}

}  // namespace commsgd::comm
