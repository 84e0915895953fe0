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
      // Each slice of the message, once sent, becomes the sum of that slice from the in-peers.
      std::vector<float>& message = exchange.message;
      const std::size_t in_degree = exchange.in.size();
      exchange_in_slices(*thread_comm_, message, exchange.out, exchange.in, scratch,
                         [&](std::size_t offset, std::size_t count, Buffer<const float> arrived) {
                           if (in_degree == 0) return;
                           const std::span<const float> received = arrived.host("osgp");
                           for (std::size_t j = 0; j < count; ++j) {
                             float sum = received[j];
                             for (std::size_t i = 1; i < in_degree; ++i)
                               sum += received[i * count + j];
                             message[offset + j] = sum;
                           }
                         });
      const double seconds = watch.seconds();

      const std::lock_guard lock(mutex_);
      (in_degree > 0 ? arrived_ : spare_).push_back(std::move(message));
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

void Osgp::wait_until_outstanding(std::unique_lock<std::mutex>& lock, std::uint64_t outstanding) {
  const auto done = [&] { return failure_ || started_ - finished_ <= outstanding; };
  const auto timeout = std::chrono::duration<double>(timeout_seconds_);
  if (!changed_.wait_for(lock, timeout, done)) {
    throw std::runtime_error("osgp: no gossip exchange finished in " +
                             std::to_string(timeout_seconds_) + " s (--comm-timeout)");
  }
  if (failure_) std::rethrow_exception(failure_);
}

void Osgp::absorb_arrivals(std::span<float> x) {
  absorbed_ = finished_;
  for (std::vector<float>& sum : arrived_) {
    push_sum_.absorb_weight(sum[0]);
    float* __restrict mine = x.data();
    const float* __restrict theirs = sum.data() + 1;
    for (std::size_t i = 0; i < x.size(); ++i) mine[i] += theirs[i];
    spare_.push_back(std::move(sum));
  }
  arrived_.clear();
}

void Osgp::start_exchange(std::span<float> x) {
  Exchange exchange;
  exchange.out = topology_->out_peers(comm_.rank(), iteration_);
  exchange.in = topology_->in_peers(comm_.rank(), iteration_);
  exchange.message = idle_buffer();
  exchange.message.resize(x.size() + 1);
  exchange.message[0] = push_sum_.split(x, exchange.out.size());
  std::copy(x.begin(), x.end(), exchange.message.begin() + 1);
  stats_.entries_sent += exchange.out.size() * x.size();

  const std::lock_guard lock(mutex_);
  queue_.push_back(std::move(exchange));
  ++started_;
  most_in_flight_ = std::max(most_in_flight_, started_ - absorbed_);
  ++iteration_;
  changed_.notify_all();
}

bool Osgp::ready_for_next_exchange(std::span<float> x) {
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

void Osgp::before_step(Buffer<float> params) {
  push_sum_.to_numerator(params.host("osgp"));
}

void Osgp::after_step(Buffer<float> buffer) {
  const std::span<float> x = buffer.host("osgp");
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

void Osgp::begin_evaluation(Buffer<float> buffer, bool own_model) {
  const std::span<float> params = buffer.host("osgp");
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  lock.unlock();
  // Every exchange has finished, and none starts before the next step: the arrivals stay as they
  // are, pending, and the model evaluated is the one they will make.
  keep_own_model(params);
  lock.lock();
  push_sum_.to_numerator(params);
  push_sum_.to_model(params, arrived_);
  lock.unlock();
  consensus_.measure(params, comm_, !own_model);
}

std::vector<float> Osgp::idle_buffer() {
  const std::lock_guard lock(mutex_);
  if (spare_.empty()) return {};
  std::vector<float> buffer = std::move(spare_.back());
  spare_.pop_back();
  return buffer;
}

void Osgp::return_idle_buffer(std::vector<float>&& buffer) {
  const std::lock_guard lock(mutex_);
  spare_.push_back(std::move(buffer));
}

float Osgp::flushed_weight() {
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  return push_sum_.weight(arrived_);
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
  for (const std::vector<float>& sum : arrived_) out.write(std::span<const float>(sum));
  out.write(steps_since_start_);
}

void Osgp::load_state(StateReader& in) {
  Gossip::load_state(in);
  push_sum_.load(in);
  const std::lock_guard lock(mutex_);
  arrived_.resize(in.read<std::uint64_t>());
  for (std::vector<float>& sum : arrived_) in.read(sum);
  started_ = finished_ = absorbed_ = iteration_;
  steps_since_start_ = in.read<int>();
}

}  // namespace commsgd::algorithms
