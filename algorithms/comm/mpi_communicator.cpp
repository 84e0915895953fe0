#include "algorithms/comm/mpi_communicator.hpp"

#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace commsgd::comm {
namespace {

MPI_Datatype to_mpi(DataType type) {
  switch (type) {
    case DataType::f32:
      return MPI_FLOAT;
    case DataType::f64:
      return MPI_DOUBLE;
    case DataType::i64:
      return MPI_INT64_T;
    case DataType::u64:
      return MPI_UINT64_T;
  }
  throw std::invalid_argument("unknown communicator data type");
}

MPI_Op to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::max:
      return MPI_MAX;
    case ReduceOp::min:
      return MPI_MIN;
  }
  throw std::invalid_argument("unknown reduction");
}

// MPI counts are int; a 25M-parameter model is far below the limit, but a silent wrap is not an
// acceptable way to find out that a larger one is not.
int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error("message larger than an MPI int count; split the buffer");
  }
  return static_cast<int>(count);
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &thread_level_);
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  MPI_Comm_free(&comm_);
}

void MpiCommunicator::abort(int exit_code) {
  MPI_Abort(comm_, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it ever does.
}

Placement MpiCommunicator::placement() const {
  MPI_Comm node_comm;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm);
  Placement where;
  MPI_Comm_rank(node_comm, &where.local_rank);
  MPI_Comm_size(node_comm, &where.local_size);
  MPI_Comm_free(&node_comm);
  int is_node_leader = where.local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&is_node_leader, &where.nodes, 1, MPI_INT, MPI_SUM, comm_);
  return where;
}

void MpiCommunicator::do_allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) {
  MPI_Allreduce(MPI_IN_PLACE, buffer, checked_count(count), to_mpi(type), to_mpi(op), comm_);
}

void MpiCommunicator::do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  const int n = checked_count(bytes_per_rank);
  MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_);
}

void MpiCommunicator::do_broadcast(void* buffer, std::size_t bytes, int root) {
  MPI_Bcast(buffer, checked_count(bytes), MPI_BYTE, root, comm_);
}

void MpiCommunicator::do_barrier() {
  MPI_Barrier(comm_);
}

}  // namespace commsgd::comm
