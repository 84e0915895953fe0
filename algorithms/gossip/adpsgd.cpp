#include "algorithms/gossip/adpsgd.hpp"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "algorithms/stopwatch.hpp"

namespace commsgd::algorithms {
namespace {

using Clock = std::chrono::steady_clock;

// Polls until `ready` holds or the deadline passes. The pause grows from 20 µs to 1 ms: quick
// answers stay quick, and an idle server does not take a core from training.
template <class Ready>
bool poll_until(Clock::time_point deadline, Ready&& ready) {
  auto pause = std::chrono::microseconds(20);
  while (!ready()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  return true;
}

}  // namespace

Adpsgd::Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, double timeout_seconds)
    : Gossip(comm, std::move(topology)),
      timeout_seconds_(timeout_seconds),
      gossip_comm_(comm.duplicate()),
      budget_(comm.shared_counter()) {
  if (!topology_->symmetric()) {
    throw std::invalid_argument("--algo adpsgd needs --topology bipartite-exponential");
  }
}

Adpsgd::~Adpsgd() {
  // Normally end_training() already stopped the thread. On the way out of a failure the peers
  // may never send their last messages: after a short grace, ending the whole job is the way
  // out that cannot hang.
  if (thread_.joinable() && !stop_gossip(2.0)) comm_.abort(1);
}

void Adpsgd::begin_training(std::span<const float> params) {
  if (x_.empty()) {  // not restored from a checkpoint
    x_.assign(params.begin(), params.end());
    last_ = x_;
  }
  thread_ = std::thread([this] { gossip(); });
}

bool Adpsgd::next_iteration(long done, long iterations) {
  // Every rank asks at least once per epoch and stops at its first refusal, so an epoch takes
  // P·iterations grants and then exactly P refusals from the counter.
  const std::int64_t ranks = comm_.size();
  if (done == 0) budget_end_ += ranks * iterations;
  const bool granted = budget_->fetch_add(1) < budget_end_;
  if (!granted) budget_end_ += ranks;
  return granted;
}

void Adpsgd::after_step(std::span<float> params) {
  const Stopwatch waiting;
  const std::lock_guard lock(mutex_);
  // The only wait training ever has: for an exchange of this rank's that is under way.
  stats_.wait_seconds += waiting.seconds();
  if (failure_) std::rethrow_exception(failure_);
  // Fold the local step into the gossiped copy, then continue from the mixed model.
  for (std::size_t i = 0; i < x_.size(); ++i) x_[i] += params[i] - last_[i];
  std::copy(x_.begin(), x_.end(), params.begin());
  last_ = x_;
  ++trained_;
  ++iteration_;
  stats_.entries_sent += x_.size();
  stats_.entries_offered += x_.size();
  changed_.notify_all();
}

void Adpsgd::end_training() {
  budget_->release();
  if (!stop_gossip(timeout_seconds_)) {
    throw std::runtime_error("adpsgd: the gossip thread did not finish within " +
                             std::to_string(timeout_seconds_) + " s (--comm-timeout)");
  }
  const std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

bool Adpsgd::stop_gossip(double timeout_seconds) {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  changed_.notify_all();
  if (!changed_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                         [&] { return finished_; })) {
    return false;
  }
  lock.unlock();
  thread_.join();
  return true;
}

AlgorithmStats Adpsgd::stats() const {
  const std::lock_guard lock(mutex_);
  AlgorithmStats s = stats_;
  s.communicate_seconds = exchange_seconds_;
  s.bytes_sent = bytes_exchanged_;
  s.bytes_received = bytes_exchanged_;
  return s;
}

void Adpsgd::gossip() {
  try {
    if (active()) {
      initiate_exchanges(resumed_at_);
    } else {
      serve_exchanges();
    }
  } catch (...) {
    const std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
  }
  const std::lock_guard lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

void Adpsgd::average_with(std::span<const std::byte> peer_params) {
  if (peer_params.size() != x_.size() * sizeof(float)) {
    throw std::runtime_error("adpsgd: a peer's parameters differ in size");
  }
  const auto* peer = reinterpret_cast<const float*>(peer_params.data());
  for (std::size_t i = 0; i < x_.size(); ++i) x_[i] = (x_[i] + peer[i]) * 0.5f;
}

void Adpsgd::initiate_exchanges(std::uint64_t first_round) {
  std::vector<std::byte> reply;
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
  for (std::uint64_t round = first_round;; ++round) {
    std::unique_lock lock(mutex_);
    // At most one exchange per local iteration, so gossip never outruns training.
    changed_.wait(lock, [&] { return stopping_ || trained_ > round; });
    if (stopping_) break;
    const int peer = topology_->out_peers(comm_.rank(), round).front();
    const Stopwatch watch;
    gossip_comm_->send(x_.data(), x_.size() * sizeof(float), peer);
    if (!poll_until(Clock::now() + timeout,
                    [&] { return gossip_comm_->probe(peer).has_value(); })) {
      throw std::runtime_error("adpsgd: rank " + std::to_string(peer) + " did not answer a " +
                               "gossip request within " + std::to_string(timeout_seconds_) +
                               " s (--comm-timeout)");
    }
    gossip_comm_->receive(reply, peer);
    average_with(reply);
    bytes_exchanged_ += reply.size();
    exchange_seconds_ += watch.seconds();
  }
  for (int passive = 0; passive < comm_.size(); passive += 2) {
    gossip_comm_->send(nullptr, 0, passive);
  }
}

void Adpsgd::serve_exchanges() {
  const int actives = comm_.size() / 2;
  int done = 0;
  std::vector<std::byte> request;
  while (done < actives) {
    std::optional<int> from;
    // No deadline while the run goes on: a passive rank cannot know how long training takes.
    poll_until(Clock::time_point::max(), [&] {
      from = gossip_comm_->probe(comm::Communicator::kAnyPeer);
      return from.has_value();
    });
    gossip_comm_->receive(request, *from);
    if (request.empty()) {
      ++done;
      continue;
    }
    const std::lock_guard lock(mutex_);
    const Stopwatch watch;
    gossip_comm_->send(x_.data(), x_.size() * sizeof(float), *from);
    average_with(request);
    bytes_exchanged_ += request.size();
    exchange_seconds_ += watch.seconds();
  }
}

void Adpsgd::save_state(StateWriter& out) {
  Gossip::save_state(out);
  const std::lock_guard lock(mutex_);
  out.write(trained_);
  out.write(std::span<const float>(x_));
  out.write(std::span<const float>(last_));
}

void Adpsgd::load_state(StateReader& in) {
  Gossip::load_state(in);
  const std::lock_guard lock(mutex_);
  trained_ = resumed_at_ = in.read<std::uint64_t>();
  in.read(x_);
  in.read(last_);
}

}  // namespace commsgd::algorithms
