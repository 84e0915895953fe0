#include "algorithms/dense.hpp"

#include "algorithms/stopwatch.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

void Dense::synchronize_gradients(std::span<float> grads) {
  const comm::CommCounters before = comm_.counters();
  const Stopwatch watch;
  comm_.allreduce(grads, comm::ReduceOp::sum);
  kernels::scale(grads, 1.0f / static_cast<float>(comm_.size()));
  stats_.communicate_seconds += watch.seconds();
  stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
  stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;
  stats_.entries_sent += grads.size();
  stats_.entries_offered += grads.size();
}

}  // namespace commsgd::algorithms
