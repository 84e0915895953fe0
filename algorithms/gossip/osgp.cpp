#include "algorithms/gossip/osgp.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "algorithms/stopwatch.hpp"

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
  std::vector<float> received;
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
      const std::size_t n = exchange.message.size();
      const comm::CommCounters before = thread_comm_->counters();
      const Stopwatch watch;
      exchange_with_peers(*thread_comm_, exchange.message, exchange.out, exchange.in, received);
      const double seconds = watch.seconds();

      const std::lock_guard lock(mutex_);
      incoming_.resize(n, 0.0f);
      for (std::size_t i = 0; i < exchange.in.size(); ++i) {
        for (std::size_t j = 0; j < n; ++j) incoming_[j] += received[i * n + j];
      }
      has_incoming_ = has_incoming_ || !exchange.in.empty();
      ++finished_;
      thread_seconds_ += seconds;
      thread_bytes_sent_ += thread_comm_->counters().bytes_sent - before.bytes_sent;
      thread_bytes_received_ += thread_comm_->counters().bytes_received - before.bytes_received;
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

void Osgp::absorb_arrivals() {
  absorbed_ = finished_;
  if (!has_incoming_) return;
  push_sum_.absorb(incoming_);
  std::fill(incoming_.begin(), incoming_.end(), 0.0f);
  has_incoming_ = false;
}

void Osgp::start_exchange(std::size_t d) {
  Exchange exchange;
  exchange.out = topology_->out_peers(comm_.rank(), iteration_);
  exchange.in = topology_->in_peers(comm_.rank(), iteration_);
  exchange.message.resize(push_sum_.message_size());
  push_sum_.split(exchange.out.size(), exchange.message);
  stats_.entries_sent += exchange.out.size() * d;

  const std::lock_guard lock(mutex_);
  queue_.push_back(std::move(exchange));
  ++started_;
  most_in_flight_ = std::max(most_in_flight_, started_ - absorbed_);
  ++iteration_;
  changed_.notify_all();
}

bool Osgp::ready_for_next_exchange() {
  std::unique_lock lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  if (started_ > 0 && steps_since_start_ < limit_) {
    if (finished_ == started_) absorb_arrivals();  // landed early: absorbed, not yet followed
    ++steps_since_start_;
    return false;
  }
  if (started_ > absorbed_) {
    const Stopwatch watch;
    wait_until_outstanding(lock, 0);
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals();
  }
  steps_since_start_ = 0;
  return true;
}

void Osgp::after_step(std::span<float> params) {
  push_sum_.apply_step(params);
  stats_.entries_offered += params.size();
  if (overlap_ == Overlap::one_in_flight) {
    if (ready_for_next_exchange()) start_exchange(params.size());
  } else {
    start_exchange(params.size());
    std::unique_lock lock(mutex_);
    const Stopwatch watch;
    wait_until_outstanding(lock, static_cast<std::uint64_t>(limit_));
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals();
  }
  push_sum_.debias(params);
}

PushSum Osgp::flushed() {
  std::unique_lock lock(mutex_);
  wait_until_outstanding(lock, 0);
  PushSum state = push_sum_;
  if (has_incoming_) state.absorb(incoming_);
  return state;
}

std::span<const float> Osgp::model_for_evaluation(std::span<const float> params) {
  if (!push_sum_.started()) return consensus_.compute(params, comm_);
  // The arrivals stay pending: the training thread's next step adds them, as it would have.
  std::vector<float> model(params.size());
  flushed().debias(model);
  return consensus_.compute(model, comm_);
}

float Osgp::flushed_weight() {
  return flushed().weight();
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
  out.write(static_cast<std::uint8_t>(has_incoming_));
  out.write(std::span<const float>(incoming_));
  out.write(steps_since_start_);
}

void Osgp::load_state(StateReader& in) {
  Gossip::load_state(in);
  push_sum_.load(in);
  const std::lock_guard lock(mutex_);
  has_incoming_ = in.read<std::uint8_t>() != 0;
  in.read(incoming_);
  started_ = finished_ = absorbed_ = iteration_;
  steps_since_start_ = in.read<int>();
}

}  // namespace commsgd::algorithms
