#include "algorithms/comm/throttled_communicator.hpp"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace commsgd::comm {

ThrottledCommunicator::ThrottledCommunicator(Communicator& inner, double megabits_per_second)
    : inner_(inner), bytes_per_second_(megabits_per_second * 1e6 / 8) {
  if (!(megabits_per_second > 0)) throw std::invalid_argument("link bandwidth must be > 0");
}

ThrottledCommunicator::ThrottledCommunicator(std::unique_ptr<Communicator> inner,
                                             double megabits_per_second)
    : ThrottledCommunicator(*inner, megabits_per_second) {
  owned_ = std::move(inner);
}

void ThrottledCommunicator::do_abort(int exit_code) {
  inner_.abort(exit_code);
  std::abort();  // unreachable: the inner abort does not return
}

std::unique_ptr<Communicator> ThrottledCommunicator::do_duplicate() {
  return std::make_unique<ThrottledCommunicator>(inner_.duplicate(), bytes_per_second_ * 8 / 1e6);
}

template <class Op>
void ThrottledCommunicator::throttled(Op&& op) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t before = inner_.counters().bytes_sent;
  op();
  const double seconds =
      static_cast<double>(inner_.counters().bytes_sent - before) / bytes_per_second_;
  std::this_thread::sleep_until(start +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(seconds)));
}

void ThrottledCommunicator::do_allreduce(void* buffer, std::size_t count, DataType type,
                                         ReduceOp op) {
  throttled([&] { inner_.allreduce(buffer, count, type, op); });
}

void ThrottledCommunicator::do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  throttled([&] { inner_.allgather(send, recv, bytes_per_rank); });
}

void ThrottledCommunicator::do_allgatherv(const void* send, void* recv,
                                          std::span<const std::size_t> bytes_per_rank) {
  throttled([&] { inner_.allgatherv(send, recv, bytes_per_rank); });
}

void ThrottledCommunicator::do_broadcast(void* buffer, std::size_t bytes, int root) {
  throttled([&] { inner_.broadcast(buffer, bytes, root); });
}

void ThrottledCommunicator::do_barrier() {
  inner_.barrier();
}

void ThrottledCommunicator::do_send(const void* data, std::size_t bytes, int peer) {
  throttled([&] { inner_.send(data, bytes, peer); });
}

void ThrottledCommunicator::do_receive(std::vector<std::byte>& recv, int peer) {
  inner_.receive(recv, peer);
}

std::optional<int> ThrottledCommunicator::do_probe(int peer) {
  return inner_.probe(peer);
}

void ThrottledCommunicator::do_exchange(MessageParts send, int peer, std::vector<std::byte>& recv) {
  throttled([&] { inner_.exchange(send, peer, recv); });
}

void ThrottledCommunicator::do_send_receive(std::span<const Outgoing> sends,
                                            std::span<const Incoming> receives) {
  throttled([&] { inner_.send_receive(sends, receives); });
}

}  // namespace commsgd::comm
