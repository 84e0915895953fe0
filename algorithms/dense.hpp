#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/engine.hpp"
#include "algorithms/engine_backed.hpp"
#include "algorithms/gradient_buckets.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// Dense S-SGD, the baseline: every rank allreduces its whole gradient and applies the mean.
//
// The papers' comparisons are only honest against a strong baseline, so by default it overlaps
// communication with backward as PyTorch DDP and Horovod do: the gradient buffer is cut into
// buckets (GradientBuckets), and a communication engine allreduces them in a fixed order, each as
// soon as backward has filled it, while backward goes on with the layers below. With no buckets
// (bucket_bytes 0) the whole gradient is reduced in one call after backward.
//
// A 16-bit wire type (fp16, bf16) halves the bytes: each rank rounds its share g/P, and the sum
// is taken in that precision. fp32 keeps the sum exact to float rounding.
//
// Written against buffers and kernels/ops.hpp, so the gradient may be in host or CUDA memory;
// the communicator sends it over MPI or NCCL accordingly. The buckets' allreduces are operations
// of a communication engine (comm/engine.hpp), started in bucket order as backward fills them and
// waited for by synchronize_gradients(). On a device the engine reduces on a stream of its own, so
// that a bucket's transfer runs beside the backward kernels of the layers below instead of queued
// behind them: its stream follows the gradient's from the moment the bucket is full (an event),
// every bucket's allreduce is waited for before it counts as done (so that its time is the
// transfer's, not the enqueueing's), and the step follows the engine's stream once every bucket is
// done.
class Dense : protected EngineBacked, public Algorithm {
 public:
  // Uses config.bucket_bytes, wire and barrier_before_communicate.
  Dense(comm::Communicator& comm, const AlgorithmConfig& config);

  bool works_in(kernels::Memory) const override { return true; }
  bool overlaps_backward() const override { return bucket_entries_ > 0; }
  void begin_backward(Buffer<float> grads) override;
  void gradient_ready(std::size_t offset, std::size_t count) override;
  void synchronize_gradients(Buffer<float> grads) override;
  void after_step(Buffer<float>) override {}
  AlgorithmStats stats() const override;
  // Dense S-SGD keeps nothing between iterations: the parameters and optimizer say it all.
  void save_state(StateWriter&) override {}
  void load_state(StateReader&) override {}

 protected:
  ~Dense() override = default;  // made as EngineStoppedFirst<Dense>, by make_engine_backed

 private:
  // Replaces g by the mean over ranks of everyone's g, on `comm`.
  void average(comm::Communicator& comm, Buffer<float> g);
  void open_backward(Buffer<float> grads);
  // Starts the allreduce of each bucket that is full and follows the last one started.
  void start_full_buckets();

  comm::Communicator& comm_;
  const comm::DataType wire_;
  const std::size_t bucket_entries_;
  const bool barrier_;
  AlgorithmStats stats_;
  // A bucket in 16 bits, used by whoever averages (the engine's operations one at a time).
  kernels::ops::Storage<std::uint16_t> wire_buffer_;
  std::optional<GradientBuckets> buckets_;  // sized by the first backward
  Buffer<float> grads_;                     // this backward's
  bool backward_open_ = false;              // begin_backward() came, synchronize_gradients() not
  std::vector<comm::Work> reductions_;      // this backward's, one per bucket started, in order
};

}  // namespace commsgd::algorithms
