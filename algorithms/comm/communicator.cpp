#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::f32:
      return 4;
    case DataType::f64:
    case DataType::i64:
    case DataType::u64:
      return 8;
  }
  return 0;
}

void Communicator::allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) {
  const std::uint64_t p = static_cast<std::uint64_t>(size());
  const std::uint64_t wire = 2 * (p - 1) * count * size_of(type) / p;
  ++counters_.calls;
  counters_.bytes_sent += wire;
  counters_.bytes_received += wire;
  do_allreduce(buffer, count, type, op);
}

void Communicator::allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  const std::uint64_t wire = static_cast<std::uint64_t>(size() - 1) * bytes_per_rank;
  ++counters_.calls;
  counters_.bytes_sent += wire;
  counters_.bytes_received += wire;
  do_allgather(send, recv, bytes_per_rank);
}

void Communicator::broadcast(void* buffer, std::size_t bytes, int root) {
  ++counters_.calls;
  if (size() > 1) (rank() == root ? counters_.bytes_sent : counters_.bytes_received) += bytes;
  do_broadcast(buffer, bytes, root);
}

void Communicator::barrier() {
  ++counters_.calls;
  do_barrier();
}

}  // namespace commsgd::comm
