#include "algorithms/dense.hpp"

#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "kernels/half_precision.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

Dense::Dense(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm),
      wire_(config.wire),
      bucket_entries_(config.bucket_bytes / sizeof(float)),
      barrier_(config.barrier_before_communicate) {
  if (wire_ != comm::DataType::f32 && wire_ != comm::DataType::f16 &&
      wire_ != comm::DataType::bf16) {
    throw std::invalid_argument("dense: the wire type must be fp32, fp16 or bf16");
  }
  if (config.bucket_bytes > 0 && bucket_entries_ == 0) {
    throw std::invalid_argument("dense: a bucket must hold at least one float (4 bytes)");
  }
  if (bucket_entries_ == 0) return;
  thread_comm_ = comm.duplicate();
  thread_ = std::thread([this] { communicate(); });
}

Dense::~Dense() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Dense::average(comm::Communicator& comm, std::span<float> g) {
  const float share = 1.0f / static_cast<float>(comm.size());
  if (wire_ == comm::DataType::f32) {
    comm.allreduce(g, comm::ReduceOp::sum);
    kernels::scale(g, share);
    return;
  }
  // Scaled before rounding, so that the sum of P shares stays within fp16's range.
  kernels::scale(g, share);
  wire_buffer_.resize(g.size());
  const bool fp16 = wire_ == comm::DataType::f16;
  fp16 ? kernels::to_fp16(g, wire_buffer_) : kernels::to_bf16(g, wire_buffer_);
  comm.allreduce(wire_buffer_.data(), wire_buffer_.size(), wire_, comm::ReduceOp::sum);
  fp16 ? kernels::from_fp16(wire_buffer_, g) : kernels::from_bf16(wire_buffer_, g);
}

void Dense::communicate() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return stopping_ || (buckets_ && reduced_ < buckets_->count() && buckets_->full(reduced_));
    });
    if (stopping_) return;
    const GradientBuckets::Range r = buckets_->range(reduced_);
    const std::span<float> bucket = grads_.subspan(r.begin, r.end - r.begin);
    lock.unlock();
    const comm::CommCounters before = thread_comm_->counters();
    const Stopwatch watch;
    std::exception_ptr failure;
    try {
      average(*thread_comm_, bucket);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    thread_seconds_ += watch.seconds();
    thread_bytes_sent_ += thread_comm_->counters().bytes_sent - before.bytes_sent;
    thread_bytes_received_ += thread_comm_->counters().bytes_received - before.bytes_received;
    ++reduced_;
    if (failure) {
      failure_ = failure;
      reduced_ = buckets_->count();  // nothing more of this backward will be reduced
    }
    changed_.notify_all();
    if (failure) return;
  }
}

void Dense::open_backward(std::span<float> grads) {
  if (!buckets_) buckets_.emplace(grads.size(), bucket_entries_);
  buckets_->reset();
  grads_ = grads;
  reduced_ = 0;
  backward_open_ = true;
}

void Dense::begin_backward(std::span<float> grads) {
  if (bucket_entries_ == 0) return;
  const std::lock_guard lock(mutex_);
  open_backward(grads);
}

void Dense::gradient_ready(std::size_t offset, std::size_t count) {
  if (bucket_entries_ == 0) return;
  bool notify = false;
  {
    const std::lock_guard lock(mutex_);
    if (!backward_open_) throw std::logic_error("dense: gradient reported outside a backward");
    notify = buckets_->fill(offset, count);
  }
  if (notify) changed_.notify_all();
}

void Dense::synchronize_gradients(std::span<float> grads) {
  stats_.entries_sent += grads.size();
  stats_.entries_offered += grads.size();
  if (bucket_entries_ == 0) {
    const comm::CommCounters before = comm_.counters();
    Stopwatch watch;
    if (barrier_) {
      comm_.barrier();
      stats_.wait_seconds += watch.restart();
    }
    average(comm_, grads);
    stats_.communicate_seconds += watch.seconds();
    stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
    stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;
    return;
  }
  const Stopwatch watch;
  std::unique_lock lock(mutex_);
  // A backward that was skipped, or run without reporting, is opened here.
  if (!backward_open_) open_backward(grads);
  if (grads.data() != grads_.data() || grads.size() != grads_.size()) {
    throw std::logic_error("dense: synchronize_gradients got another buffer than backward filled");
  }
  buckets_->fill_all();  // what backward did not report (unused parameters) is final now
  changed_.notify_all();
  changed_.wait(lock, [&] { return reduced_ == buckets_->count() || failure_; });
  backward_open_ = false;
  stats_.wait_seconds += watch.seconds();
  if (failure_) std::rethrow_exception(failure_);
}

AlgorithmStats Dense::stats() const {
  AlgorithmStats s = stats_;
  const std::lock_guard lock(mutex_);
  s.communicate_seconds += thread_seconds_;
  s.bytes_sent += thread_bytes_sent_;
  s.bytes_received += thread_bytes_received_;
  return s;
}

}  // namespace commsgd::algorithms
