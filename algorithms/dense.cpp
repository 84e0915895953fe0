#include "algorithms/dense.hpp"

#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

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

void Dense::average(comm::Communicator& comm, Buffer<float> g) {
  const float share = 1.0f / static_cast<float>(comm.size());
  if (wire_ == comm::DataType::f32) {
    comm.allreduce(g, comm::ReduceOp::sum);
    kernels::ops::scale(g, share);
  } else {
    // Scaled before rounding, so that the sum of P shares stays within fp16's range.
    kernels::ops::scale(g, share);
    wire_buffer_.resize(g.size(), g.place());
    const bool bf16 = wire_ == comm::DataType::bf16;
    kernels::ops::to_half(g, wire_buffer_.buffer(), bf16);
    comm.allreduce(wire_buffer_.buffer().data(), g.size(), wire_, comm::ReduceOp::sum, g.place());
    kernels::ops::from_half(wire_buffer_.buffer(), g, bf16);
  }
  comm.synchronize(g.place());
}

void Dense::communicate() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return stopping_ || (buckets_ && reduced_ < buckets_->count() && buckets_->full(reduced_));
    });
    if (stopping_) return;
    const GradientBuckets::Range r = buckets_->range(reduced_);
    const Buffer<float> bucket = grads_.subspan(r.begin, r.end - r.begin);
    const kernels::Place place = stream_->place();
    lock.unlock();
    const TrafficMeter traffic(*thread_comm_);
    const Stopwatch watch;
    std::exception_ptr failure;
    try {
      stream_->enter();
      // Backward has queued the bucket's last gradient on its stream by now.
      kernels::ops::order_after(place, bucket.place());
      average(*thread_comm_, bucket.on(place));
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    thread_seconds_ += watch.seconds();
    traffic.add_to(thread_bytes_sent_, thread_bytes_received_);
    ++reduced_;
    if (failure) {
      failure_ = failure;
      reduced_ = buckets_->count();  // nothing more of this backward will be reduced
    }
    changed_.notify_all();
    if (failure) return;
  }
}

void Dense::open_backward(Buffer<float> grads) {
  if (!buckets_) buckets_.emplace(grads.size(), bucket_entries_);
  if (!stream_) stream_ = std::make_unique<kernels::ops::SideStream>(grads.place().memory);
  buckets_->reset();
  grads_ = grads;
  reduced_ = 0;
  backward_open_ = true;
}

void Dense::begin_backward(Buffer<float> grads) {
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

void Dense::synchronize_gradients(Buffer<float> grads) {
  stats_.entries_sent += grads.size();
  stats_.entries_offered += grads.size();
  if (bucket_entries_ == 0) {
    const TrafficMeter traffic(comm_);
    Stopwatch watch;
    if (barrier_) {
      comm_.barrier();
      stats_.wait_seconds += watch.restart();
    }
    average(comm_, grads);
    stats_.communicate_seconds += watch.seconds();
    traffic.add_to(stats_.bytes_sent, stats_.bytes_received);
    return;
  }
  const Stopwatch watch;
  std::unique_lock lock(mutex_);
  // A backward that was skipped, or run without reporting, is opened here.
  if (!backward_open_) open_backward(grads);
  if (grads.data() != grads_.data() || grads.size() != grads_.size() ||
      grads.place() != grads_.place()) {
    throw std::logic_error("dense: synchronize_gradients got another buffer than backward filled");
  }
  buckets_->fill_all();  // what backward did not report (unused parameters) is final now
  changed_.notify_all();
  changed_.wait(lock, [&] { return reduced_ == buckets_->count() || failure_; });
  backward_open_ = false;
  stats_.wait_seconds += watch.seconds();
  if (failure_) std::rethrow_exception(failure_);
  kernels::ops::order_after(grads.place(), stream_->place());  // the step uses the mean
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
