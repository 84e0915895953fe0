#include "algorithms/gossip/osgp.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {

Osgp::Osgp(comm::Communicator& comm, std::unique_ptr<Topology> topology, Overlap overlap, int limit,
           double timeout_seconds)
    : Gossip(comm, std::move(topology)),
      overlap_(overlap),
      limit_(limit),
      timeout_seconds_(timeout_seconds),
      thread_comm_(comm.duplicate()) {
  if (limit_ < 0) throw std::invalid_argument("--max-staleness and --synch-freq must be >= 0");
  thread_ = std::thread([this] { communicate(); });
}

Osgp::~Osgp() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Osgp::communicate() {
  kernels::ops::Storage<float> scratch;
  for (;;) {
    Exchange exchange;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to send
      exchange = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      const TrafficMeter traffic(*thread_comm_);
      const Stopwatch watch;
      run(exchange, scratch);
      const double seconds = watch.seconds();

      const std::lock_guard lock(mutex_);
      (exchange.in.empty() ? spare_ : arrived_).push_back(std::move(exchange));
      ++finished_;
      thread_seconds_ += seconds;
      traffic.add_to(thread_bytes_sent_, thread_bytes_received_);
    } catch (...) {
      const std::lock_guard lock(mutex_);
      failure_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

void Osgp::run(Exchange& exchange, kernels::ops::Storage<float>& scratch) {
  stream_->enter();
  const kernels::Place place = exchange.place;
  const Buffer<float> message = exchange.message.buffer().on(place);
  const std::size_t in_degree = exchange.in.size();
  exchange.heads.resize(1 + in_degree, place);
  const Buffer<float> heads = exchange.heads.buffer();
  kernels::ops::copy_from_host(std::span(&exchange.weight, 1), heads.subspan(0, 1));
  // Each slice of the message, once sent, becomes the sum of that slice from the in-peers.
  exchange_in_slices(*thread_comm_, message, exchange.out, exchange.in, scratch,
                     [&](std::size_t offset, std::size_t count, Buffer<const float> received) {
                       if (in_degree == 0) return;
                       const Buffer<float> sum = message.subspan(offset, count);
                       kernels::ops::copy(received.subspan(0, count), sum);
                       if (in_degree == 1) return;
                       kernels::ops::add_blocks(
                           sum, received.subspan(count, (in_degree - 1) * count), 1.0f);
                     },
                     {heads.subspan(0, 1), heads.subspan(1, in_degree)});
  // What is handed back must be complete: the training thread adds it on its own stream. The
  // communicator's wait ends in an error if a peer never comes; the weights' download then waits
  // for the sums enqueued after the last slice.
  thread_comm_->synchronize(place);
  std::vector<float> weights(in_degree);
  kernels::ops::copy_to_host(heads.subspan(1, in_degree), weights);
  exchange.weight = 0;
  for (const float w : weights) exchange.weight += w;
}

void Osgp::wait_until_outstanding(std::unique_lock<std::mutex>& lock, std::uint64_t outstanding) {
  const auto done = [&] { return failure_ || started_ - finished_ <= outstanding; };
  const auto timeout = std::chrono::duration<double>(timeout_seconds_);
  if (!changed_.wait_for(lock, timeout, done)) {
    throw std::runtime_error("osgp: no gossip exchange finished in " +
                             std::to_string(timeout_seconds_) + " s (--comm-timeout)");
  }
  if (failure_) std::rethrow_exception(failure_);
}

void Osgp::absorb_arrivals(Buffer<float> x) {
  absorbed_ = finished_;
  for (Exchange& sum : arrived_) {
    push_sum_.absorb_weight(sum.weight);
    kernels::ops::add(x, sum.message.buffer().on(x.place()));
    spare_.push_back(std::move(sum));
  }
  arrived_.clear();
}

std::vector<float> Osgp::pending_weights() const {
  std::vector<float> weights;
  for (const Exchange& sum : arrived_) weights.push_back(sum.weight);
  return weights;
}

void Osgp::start_exchange(Buffer<float> x) {
  if (!stream_) stream_ = std::make_unique<kernels::ops::SideStream>(x.place().memory);
  Exchange exchange;
  {
    const std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      exchange = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  exchange.out = topology_->out_peers(comm_.rank(), iteration_);
  exchange.in = topology_->in_peers(comm_.rank(), iteration_);
  exchange.place = stream_->place();
  exchange.weight = push_sum_.split(x, exchange.out.size());
  exchange.message.resize(x.size(), x.place());
  kernels::ops::copy(x, exchange.message.buffer());
  kernels::ops::order_after(exchange.place, x.place());
  stats_.entries_sent += exchange.out.size() * x.size();

  const std::lock_guard lock(mutex_);
  queue_.push_back(std::move(exchange));
  ++started_;
  most_in_flight_ = std::max(most_in_flight_, started_ - absorbed_);
  ++iteration_;
  changed_.notify_all();
}

bool Osgp::ready_for_next_exchange(Buffer<float> x) {
  std::unique_lock lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  if (started_ > 0 && steps_since_start_ < limit_) {
    if (finished_ == started_) absorb_arrivals(x);  // landed early: absorbed, not yet followed
    ++steps_since_start_;
    return false;
  }
  if (started_ > absorbed_) {
    const Stopwatch watch;
    wait_until_outstanding(lock, 0);
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals(x);
  }
  steps_since_start_ = 0;
  return true;
}

void Osgp::begin_training(Buffer<const float> params) {
  const std::lock_guard lock(mutex_);
  for (Exchange& sum : arrived_) kernels::ops::relocate(sum.message, params.place());
}

void Osgp::before_step(Buffer<float> params) {
  push_sum_.to_numerator(params);
}

void Osgp::after_step(Buffer<float> x) {
  stats_.entries_offered += x.size();
  if (overlap_ == Overlap::one_in_flight) {
    if (ready_for_next_exchange(x)) start_exchange(x);
  } else {
    start_exchange(x);
    std::unique_lock lock(mutex_);
    const Stopwatch watch;
    wait_until_outstanding(lock, static_cast<std::uint64_t>(limit_));
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals(x);
  }
  push_sum_.to_model(x);
}

void Osgp::begin_evaluation(Buffer<float> params, bool own_model) {
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  lock.unlock();
  // Every exchange has finished, and none starts before the next step: the arrivals stay as they
  // are, pending, and the model evaluated is the one they will make.
  keep_own_model(params);
  lock.lock();
  push_sum_.to_numerator(params);
  for (const Exchange& sum : arrived_)
    kernels::ops::add(params, sum.message.buffer().on(params.place()));
  push_sum_.to_model(params, pending_weights());
  lock.unlock();
  consensus_.measure(params, comm_, !own_model);
}

kernels::ops::Storage<float> Osgp::idle_buffer() {
  const std::lock_guard lock(mutex_);
  if (spare_.empty()) return {};
  kernels::ops::Storage<float> buffer = std::move(spare_.back().message);
  spare_.pop_back();
  return buffer;
}

void Osgp::return_idle_buffer(kernels::ops::Storage<float>&& buffer) {
  const std::lock_guard lock(mutex_);
  spare_.emplace_back().message = std::move(buffer);
}

float Osgp::flushed_weight() {
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  return push_sum_.weight(pending_weights());
}

std::uint64_t Osgp::most_in_flight() const {
  const std::lock_guard lock(mutex_);
  return most_in_flight_;
}

AlgorithmStats Osgp::stats() const {
  const std::lock_guard lock(mutex_);
  AlgorithmStats s = stats_;
  s.communicate_seconds = thread_seconds_;
  s.bytes_sent = thread_bytes_sent_;
  s.bytes_received = thread_bytes_received_;
  return s;
}

void Osgp::save_state(StateWriter& out) {
  Gossip::save_state(out);
  push_sum_.save(out);
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  out.write(static_cast<std::uint64_t>(arrived_.size()));
  std::vector<float> values;
  for (const Exchange& sum : arrived_) {
    out.write(sum.weight);
    values.resize(sum.message.size());
    kernels::ops::copy_to_host(sum.message.buffer(), values);
    out.write(std::span<const float>(values));
  }
  out.write(steps_since_start_);
}

void Osgp::load_state(StateReader& in) {
  Gossip::load_state(in);
  push_sum_.load(in);
  const std::lock_guard lock(mutex_);
  arrived_.resize(in.read<std::uint64_t>());
  std::vector<float> values;
  for (Exchange& sum : arrived_) {
    sum.weight = in.read<float>();
    in.read(values);
    sum.message.resize(values.size(), kernels::kHost);
    kernels::ops::copy_from_host(values, sum.message.buffer());
  }
  started_ = finished_ = absorbed_ = iteration_;
  steps_since_start_ = in.read<int>();
}

}  // namespace commsgd::algorithms
