#pragma once

#include <mpi.h>

#include <vector>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// MPI_Init_thread / MPI_Finalize for the life of the process. MPI_THREAD_MULTIPLE is asked for
// because the gossip algorithms run communication threads.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

class MpiCommunicator final : public Communicator {
 public:
  // Works on a duplicate of `comm`, so its traffic can never match another library's messages.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Placement placement() const;
  std::unique_ptr<SharedCounter> shared_counter() override;

 protected:
  // Throws std::runtime_error unless MPI granted MPI_THREAD_MULTIPLE, which the communication
  // threads the duplicates are for need.
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
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  // do_exchange's requests, matched messages and their sizes, kept so that an exchange allocates
  // nothing once it has run.
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Message> messages_;
  std::vector<int> part_bytes_;
};

}  // namespace commsgd::comm
