#pragma once

#include <memory>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// A communicator whose every operation takes at least as long as its traffic needs on a link of
// the given bandwidth: after the real transfer, the calling thread waits out the rest of
// bytes_sent / rate. Emulates a slow network on one machine without network namespaces (a
// communication thread pays the wait, not the training thread — which is what overlap is for).
class ThrottledCommunicator final : public Communicator {
 public:
  ThrottledCommunicator(Communicator& inner, double megabits_per_second);
  // Owns a communicator (a duplicate made for a communication thread).
  ThrottledCommunicator(std::unique_ptr<Communicator> inner, double megabits_per_second);

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::unique_ptr<SharedCounter> shared_counter() override { return inner_.shared_counter(); }

 protected:
  std::unique_ptr<Communicator> do_duplicate() override;
  [[noreturn]] void do_abort(int exit_code) override;
  void do_allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) override;
  void do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) override;
  void do_allgatherv(const void* send, void* recv,
                     std::span<const std::size_t> bytes_per_rank) override;
  void do_broadcast(void* buffer, std::size_t bytes, int root) override;
  void do_barrier() override;
  void do_send(const void* data, std::size_t bytes, int peer) override;
  void do_receive(std::vector<std::byte>& recv, int peer) override;
  std::optional<int> do_probe(int peer) override;
  void do_exchange(MessageParts send, int peer, std::vector<std::byte>& recv) override;
  void do_send_receive(std::span<const Outgoing> sends,
                       std::span<const Incoming> receives) override;

 private:
  // Runs `op` on the inner communicator, then waits until its bytes would have crossed the link.
  template <class Op>
  void throttled(Op&& op);

  std::unique_ptr<Communicator> owned_;
  Communicator& inner_;
  double bytes_per_second_;
};

}  // namespace commsgd::comm
