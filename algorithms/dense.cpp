#include "algorithms/dense.hpp"

#include <memory>
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
  if (bucket_entries_ > 0) {
    make_engine(comm);  // the buckets' allreduces
  }
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

void Dense::open_backward(Buffer<float> grads) {
  if (!buckets_) {
    buckets_.emplace(grads.size(), bucket_entries_);
    engine().place(grads.place().memory);  // the engine's stream, made by the first backward
  }
  buckets_->reset();
  grads_ = grads;
  reductions_.clear();
  backward_open_ = true;
}

void Dense::start_full_buckets() {
  while (reductions_.size() < buckets_->count() && buckets_->full(reductions_.size())) {
    const GradientBuckets::Range r = buckets_->range(reductions_.size());
    const Buffer<float> bucket = grads_.subspan(r.begin, r.end - r.begin);
    // Backward has queued the bucket's last gradient on its stream by now: the allreduce
    // follows that point of the stream, not the later one the engine's thread finds.
    reductions_.push_back(engine().start(
        "dense: allreduce of a gradient bucket",
        [this, bucket](comm::Channel& c) { average(c.comm, bucket.on(c.place)); }, bucket.place()));
  }
}

void Dense::begin_backward(Buffer<float> grads) {
  if (bucket_entries_ > 0) open_backward(grads);
}

void Dense::gradient_ready(std::size_t offset, std::size_t count) {
  if (bucket_entries_ == 0) return;
  if (!backward_open_) throw std::logic_error("dense: gradient reported outside a backward");
  if (buckets_->fill(offset, count)) start_full_buckets();
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
  // A backward that was skipped, or run without reporting, is opened here.
  if (!backward_open_) open_backward(grads);
  if (grads.data() != grads_.data() || grads.size() != grads_.size() ||
      grads.place() != grads_.place()) {
    throw std::logic_error("dense: synchronize_gradients got another buffer than backward filled");
  }
  buckets_->fill_all();  // what backward did not report (unused parameters) is final now
  start_full_buckets();
  backward_open_ = false;
  for (const comm::Work& reduction : reductions_) reduction.wait();
  stats_.wait_seconds += watch.seconds();
  kernels::ops::order_after(grads.place(), engine().place(grads.place().memory));  // the mean
}

AlgorithmStats Dense::stats() const {
  return with_engine_totals(stats_);
}

}  // namespace commsgd::algorithms
