#include "algorithms/comm/mpi_communicator.hpp"

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "kernels/half_precision.hpp"

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
    case DataType::f16:
    case DataType::bf16:
      return MPI_UINT16_T;  // the bits; the reduction (half_sum) decodes them
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

// MPI has no half-precision types: their sums are user-defined reductions over the bits.
void sum_fp16(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto n = static_cast<std::size_t>(*count);
  kernels::add_fp16({static_cast<const std::uint16_t*>(in), n},
                    {static_cast<std::uint16_t*>(inout), n});
}

void sum_bf16(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto n = static_cast<std::size_t>(*count);
  kernels::add_bf16({static_cast<const std::uint16_t*>(in), n},
                    {static_cast<std::uint16_t*>(inout), n});
}

// Made on first use (MPI is initialized by then) and freed by MPI_Finalize.
MPI_Op half_sum(DataType type) {
  static const MPI_Op fp16 = [] {
    MPI_Op op;
    MPI_Op_create(&sum_fp16, /*commute=*/1, &op);
    return op;
  }();
  static const MPI_Op bf16 = [] {
    MPI_Op op;
    MPI_Op_create(&sum_bf16, /*commute=*/1, &op);
    return op;
  }();
  return type == DataType::f16 ? fp16 : bf16;
}

// MPI counts are int; a 25M-parameter model is far below the limit, but a silent wrap is not an
// acceptable way to find out that a larger one is not.
int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error("message larger than an MPI int count; split the buffer");
  }
  return static_cast<int>(count);
}

// Every point-to-point message of commsgd uses one tag: MPI's per-pair ordering is what keeps
// the rounds of an exchange apart, and the communicator is a private duplicate.
constexpr int kTag = 1;

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int granted = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &granted);
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

void MpiCommunicator::do_abort(int exit_code) {
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

std::unique_ptr<Communicator> MpiCommunicator::do_duplicate() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) {
    throw std::runtime_error(
        "a communication thread needs MPI_THREAD_MULTIPLE, which this MPI "
        "library did not grant");
  }
  return std::make_unique<MpiCommunicator>(comm_);
}

namespace {

// One int64 in an MPI window on rank 0; every access is a passive-target Fetch_and_op.
class MpiSharedCounter final : public SharedCounter {
 public:
  explicit MpiSharedCounter(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const MPI_Aint bytes = rank == 0 ? sizeof(std::int64_t) : 0;
    MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &memory_, &window_);
    if (rank == 0) *static_cast<std::int64_t*>(memory_) = 0;
    MPI_Win_fence(0, window_);
  }
  // A counter not released collectively belongs to a job on its way to MPI_Abort: freeing the
  // window here could wait for ranks that never come.
  ~MpiSharedCounter() override = default;

  std::int64_t fetch_add(std::int64_t value) override {
    std::int64_t before = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_);
    MPI_Fetch_and_op(&value, &before, MPI_INT64_T, 0, 0, MPI_SUM, window_);
    MPI_Win_unlock(0, window_);
    return before;
  }

  void release() override {
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  }

 private:
  void* memory_ = nullptr;
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<SharedCounter> MpiCommunicator::shared_counter() {
  return std::make_unique<MpiSharedCounter>(comm_);
}

void MpiCommunicator::do_allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) {
  const bool half = type == DataType::f16 || type == DataType::bf16;
  if (half && op != ReduceOp::sum) {
    throw std::invalid_argument("half-precision allreduce: only sum is supported");
  }
  MPI_Allreduce(MPI_IN_PLACE, buffer, checked_count(count), to_mpi(type),
                half ? half_sum(type) : to_mpi(op), comm_);
}

void MpiCommunicator::do_allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  const int n = checked_count(bytes_per_rank);
  MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_);
}

void MpiCommunicator::do_allgatherv(const void* send, void* recv,
                                    std::span<const std::size_t> bytes_per_rank) {
  std::vector<int> counts(bytes_per_rank.size()), displacements(bytes_per_rank.size());
  std::size_t offset = 0;
  for (std::size_t r = 0; r < bytes_per_rank.size(); ++r) {
    counts[r] = checked_count(bytes_per_rank[r]);
    displacements[r] = checked_count(offset);
    offset += bytes_per_rank[r];
  }
  MPI_Allgatherv(send, counts[static_cast<std::size_t>(rank_)], MPI_BYTE, recv, counts.data(),
                 displacements.data(), MPI_BYTE, comm_);
}

void MpiCommunicator::do_broadcast(void* buffer, std::size_t bytes, int root) {
  MPI_Bcast(buffer, checked_count(bytes), MPI_BYTE, root, comm_);
}

void MpiCommunicator::do_barrier() {
  MPI_Barrier(comm_);
}

void MpiCommunicator::do_send(const void* data, std::size_t bytes, int peer) {
  MPI_Send(data, checked_count(bytes), MPI_BYTE, peer, kTag, comm_);
}

// Probes first, so the receiver needs no size in advance.
void MpiCommunicator::do_receive(std::vector<std::byte>& recv, int peer) {
  MPI_Status status;
  MPI_Probe(peer, kTag, comm_, &status);
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  recv.resize(static_cast<std::size_t>(bytes));
  MPI_Recv(recv.data(), bytes, MPI_BYTE, peer, kTag, comm_, MPI_STATUS_IGNORE);
}

std::optional<int> MpiCommunicator::do_probe(int peer) {
  int waiting = 0;
  MPI_Status status;
  MPI_Iprobe(peer == kAnyPeer ? MPI_ANY_SOURCE : peer, kTag, comm_, &waiting, &status);
  if (!waiting) return std::nullopt;
  return status.MPI_SOURCE;
}

// Each part is a message of its own, sent from where it lies: one datatype over the parts'
// addresses would be one message, but Open MPI packs such a datatype through its shared-memory
// buffers, a copy that two messages avoid (docs/design.md, "Aggregations": the transfer). The
// peer's messages are matched (MPI_Mprobe) before recv is sized to hold them all.
void MpiCommunicator::do_exchange(MessageParts send, int peer, std::vector<std::byte>& recv) {
  const std::size_t n = send.size();
  requests_.resize(2 * n);
  messages_.resize(n);
  part_bytes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    MPI_Isend(send[i].data(), checked_count(send[i].size()), MPI_BYTE, peer, kTag, comm_,
              &requests_[i]);
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    MPI_Status status;
    MPI_Mprobe(peer, kTag, comm_, &messages_[i], &status);
    MPI_Get_count(&status, MPI_BYTE, &part_bytes_[i]);
    total += static_cast<std::size_t>(part_bytes_[i]);
  }
  recv.resize(total);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < n; ++i) {
    MPI_Imrecv(recv.data() + offset, part_bytes_[i], MPI_BYTE, &messages_[i], &requests_[n + i]);
    offset += static_cast<std::size_t>(part_bytes_[i]);
  }
  MPI_Waitall(checked_count(2 * n), requests_.data(), MPI_STATUSES_IGNORE);
}

void MpiCommunicator::do_send_receive(std::span<const Outgoing> sends,
                                      std::span<const Incoming> receives) {
  std::vector<MPI_Request> requests(sends.size() + receives.size());
  std::size_t i = 0;
  for (const Incoming& m : receives) {
    MPI_Irecv(m.data, checked_count(m.bytes), MPI_BYTE, m.peer, kTag, comm_, &requests[i++]);
  }
  for (const Outgoing& m : sends) {
    MPI_Isend(m.data, checked_count(m.bytes), MPI_BYTE, m.peer, kTag, comm_, &requests[i++]);
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

}  // namespace commsgd::comm
