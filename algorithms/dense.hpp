#pragma once

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "algorithms/algorithm.hpp"
#include "algorithms/gradient_buckets.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// Dense S-SGD, the baseline: every rank allreduces its whole gradient and applies the mean.
//
// The papers' comparisons are only honest against a strong baseline, so by default it overlaps
// communication with backward as PyTorch DDP and Horovod do: the gradient buffer is cut into
// buckets (GradientBuckets), and a communication thread allreduces them in a fixed order, each as
// soon as backward has filled it, while backward goes on with the layers below. With no buckets
// (bucket_bytes 0) the whole gradient is reduced in one call after backward.
//
// A 16-bit wire type (fp16, bf16) halves the bytes: each rank rounds its share g/P, and the sum
// is taken in that precision. fp32 keeps the sum exact to float rounding.
//
// Written against buffers and kernels/ops.hpp, so the gradient may be in host or CUDA memory;
// the communicator sends it over MPI or NCCL accordingly. On a device every bucket's allreduce is
// waited for before it counts as done, so that its time is the transfer's, not the enqueueing's.
// The comm thread reduces on a stream of its own (ops::SideStream), so that a bucket's transfer
// runs beside the backward kernels of the layers below instead of queued behind them: the stream
// follows the default one from the moment the bucket is full (an event), and the step follows
// the comm stream once every bucket is done.
//
// Thread safety: the comm thread touches a bucket's entries only after backward has reported all
// of them, and the training thread reads the gradient only after synchronize_gradients() has
// waited for every bucket; what the two share besides is guarded by mutex_.
class Dense final : public Algorithm {
 public:
  // Uses config.bucket_bytes, wire and barrier_before_communicate.
  Dense(comm::Communicator& comm, const AlgorithmConfig& config);
  ~Dense() override;

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

 private:
  // Replaces g by the mean over ranks of everyone's g, on `comm`.
  void average(comm::Communicator& comm, Buffer<float> g);
  void communicate();  // the comm thread's loop: the buckets of each backward, in order
  void open_backward(Buffer<float> grads);  // mutex_ held

  comm::Communicator& comm_;
  const comm::DataType wire_;
  const std::size_t bucket_entries_;
  const bool barrier_;
  // The comm thread's stream, made by the first backward; it outlives the buffer below.
  std::unique_ptr<kernels::ops::SideStream> stream_;
  // A bucket in 16 bits, used by whoever averages.
  kernels::ops::Storage<std::uint16_t> wire_buffer_;
  AlgorithmStats stats_;  // the training thread's own

  std::unique_ptr<comm::Communicator> thread_comm_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<GradientBuckets> buckets_;  // sized by the first backward
  Buffer<float> grads_;                     // this backward's
  bool backward_open_ = false;              // begin_backward() came, synchronize_gradients() not
  std::size_t reduced_ = 0;                 // buckets of this backward averaged so far
  double thread_seconds_ = 0;
  std::uint64_t thread_bytes_sent_ = 0, thread_bytes_received_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace commsgd::algorithms
