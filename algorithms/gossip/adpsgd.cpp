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

Adpsgd::Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing,
               double timeout_seconds)
    : Gossip(comm, std::move(topology)),
      mixing_(mixing),
      timeout_seconds_(timeout_seconds),
      gossip_comm_(comm.duplicate()),
      budget_(comm.shared_counter()) {
  if (mixing_ == GossipMixing::symmetric && !topology_->symmetric()) {
    throw std::invalid_argument(
        "--algo adpsgd needs --topology bipartite-exponential, or --gossip-mixing directed");
  }
  // Directed rounds need active ranks to hear only from passive ones and the other way round.
  for (int rank = 0; mixing_ == GossipMixing::directed && rank < comm.size(); ++rank) {
    for (std::uint64_t t = 0; t < 2 * static_cast<std::uint64_t>(comm.size()); ++t) {
      const std::vector<int> out = topology_->out_peers(rank, t);
      if (out.size() != 1 || (out.front() - rank) % 2 == 0) {
        throw std::invalid_argument(
            "--algo adpsgd needs a bipartite topology with one peer a round "
            "(bipartite-exponential or bipartite-exponential-two-sided)");
      }
    }
  }
}

Adpsgd::~Adpsgd() {
  // Normally end_training() already stopped the thread. On the way out of a failure the peers
  // may never send their last messages: after a short grace, ending the whole job is the way
  // out that cannot hang.
  if (thread_.joinable() && !stop_gossip(2.0)) comm_.abort(1);
}

void Adpsgd::begin_training(Buffer<const float> params) {
  const kernels::Place place = params.place();
  if (!stream_) {
    stream_ = std::make_unique<kernels::ops::SideStream>(place.memory);
    training_done_ = std::make_unique<kernels::ops::StreamPoint>(place.memory);
    gossip_done_ = std::make_unique<kernels::ops::StreamPoint>(place.memory);
  }
  if (x_.size() == 0) {  // not restored from a checkpoint
    x_.resize(params.size(), place);
    last_.resize(params.size(), place);
    kernels::ops::copy(params, x_.buffer());
    kernels::ops::copy(params, last_.buffer());
  } else {
    kernels::ops::relocate(x_, place);
    kernels::ops::relocate(last_, place);
  }
  training_done_->record(place);
  exchanges_ = rounds_planned_ = 0;
  thread_ = std::thread([this] { gossip(); });
}

bool Adpsgd::next_iteration(long done, long iterations) {
  // Every rank asks at least once per epoch and stops at its first refusal, so an epoch takes
  // P·iterations grants and then exactly P refusals from the counter.
  const std::int64_t ranks = comm_.size();
  if (done == 0) {
    budget_end_ += ranks * iterations;
    const std::lock_guard lock(mutex_);
    rounds_planned_ += static_cast<std::uint64_t>(iterations);
    changed_.notify_all();
  }
  const bool granted = budget_->fetch_add(1) < budget_end_;
  if (!granted) budget_end_ += ranks;
  return granted;
}

void Adpsgd::after_step(Buffer<float> params) {
  const Stopwatch waiting;
  const std::lock_guard lock(mutex_);
  // The only wait training ever has: for an exchange of this rank's that is under way.
  stats_.wait_seconds += waiting.seconds();
  if (failure_) std::rethrow_exception(failure_);
  // Fold the local step into the gossiped copy, then continue from the mixed model.
  const kernels::Place place = params.place();
  gossip_done_->wait(place);
  const Buffer<float> x = x_.buffer().on(place), last = last_.buffer().on(place);
  kernels::ops::add_difference(x, params, last);
  kernels::ops::copy(x, params);
  kernels::ops::copy(x, last);
  training_done_->record(place);
  ++trained_;
  ++iteration_;
  stats_.entries_sent += x.size();
  stats_.entries_offered += x.size();
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
  // Whatever touches x_ next (a last step, the buffers' release) comes after the last average.
  gossip_done_->wait(x_.buffer().place());
}

bool Adpsgd::stop_gossip(double timeout_seconds) {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  changed_.notify_all();
  // Directed rounds still owed may take a while; what must not pass is the timeout without one.
  while (!finished_) {
    const std::uint64_t seen = exchanges_;
    if (!changed_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                           [&] { return finished_ || exchanges_ != seen; })) {
      return false;
    }
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
    stream_->enter();
    if (mixing_ == GossipMixing::directed) {
      run_directed_rounds();
    } else if (active()) {
      initiate_exchanges();
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

void Adpsgd::send_header(int peer) {
  const std::uint64_t floats = x_.size();
  gossip_comm_->send(&floats, sizeof floats, peer);
}

void Adpsgd::check_header(std::span<const std::byte> header) const {
  std::uint64_t floats = 0;
  if (header.size() == sizeof floats) std::memcpy(&floats, header.data(), sizeof floats);
  if (floats != x_.size()) throw std::runtime_error("adpsgd: a peer's parameters differ in size");
}

void Adpsgd::swap_models(int peer) {
  const kernels::Place place = stream_->place();
  incoming_.resize(x_.size(), place);
  const std::size_t bytes = x_.size() * sizeof(float);
  training_done_->wait(place);
  const comm::Outgoing send{x_.buffer().data(), bytes, peer};
  const comm::Incoming receive{incoming_.buffer().data(), bytes, peer};
  gossip_comm_->send_receive(std::span(&send, 1), std::span(&receive, 1), place);
  gossip_comm_->synchronize(place);
}

void Adpsgd::average_with_incoming(double seconds) {
  const kernels::Place place = stream_->place();
  training_done_->wait(place);
  kernels::ops::add_blocks(x_.buffer().on(place), incoming_.buffer(), 0.5f);
  gossip_done_->record(place);
  bytes_exchanged_ += x_.size() * sizeof(float);
  exchange_seconds_ += seconds;
  ++exchanges_;
  changed_.notify_all();
}

bool Adpsgd::may_start_exchange(std::uint64_t k) {
  std::unique_lock lock(mutex_);
  // At most one exchange per local iteration, so gossip never outruns training.
  const auto trained_past = [&] { return trained_ - resumed_at_ > k; };
  if (mixing_ == GossipMixing::symmetric) {
    changed_.wait(lock, [&] { return stopping_ || trained_past(); });
    return !stopping_;
  }
  changed_.wait(lock, [&] { return stopping_ || (trained_past() && k < rounds_planned_); });
  return k < rounds_planned_;
}

void Adpsgd::initiate_exchanges() {
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
  for (std::uint64_t k = 0; may_start_exchange(k); ++k) {
    const std::lock_guard lock(mutex_);
    const int peer = topology_->out_peers(comm_.rank(), resumed_at_ + k).front();
    const Stopwatch watch;
    send_header(peer);
    if (!poll_until(Clock::now() + timeout,
                    [&] { return gossip_comm_->probe(peer).has_value(); })) {
      throw std::runtime_error("adpsgd: rank " + std::to_string(peer) + " did not answer a " +
                               "gossip request within " + std::to_string(timeout_seconds_) +
                               " s (--comm-timeout)");
    }
    gossip_comm_->receive(header_, peer);
    check_header(header_);
    swap_models(peer);
    average_with_incoming(watch.seconds());
  }
  for (int passive = 0; passive < comm_.size(); passive += 2) {
    gossip_comm_->send(nullptr, 0, passive);
  }
}

void Adpsgd::serve_exchanges() {
  const int actives = comm_.size() / 2;
  int done = 0;
  while (done < actives) {
    std::optional<int> from;
    // No deadline while the run goes on: a passive rank cannot know how long training takes.
    poll_until(Clock::time_point::max(), [&] {
      from = gossip_comm_->probe(comm::Communicator::kAnyPeer);
      return from.has_value();
    });
    gossip_comm_->receive(header_, *from);
    if (header_.empty()) {
      ++done;
      continue;
    }
    check_header(header_);
    const std::lock_guard lock(mutex_);
    const Stopwatch watch;
    send_header(*from);
    swap_models(*from);
    average_with_incoming(watch.seconds());
  }
}

bool Adpsgd::wait_for_round_message(int peer, std::uint64_t k) {
  const auto arrived = [&] { return gossip_comm_->probe(peer).has_value(); };
  const auto training_ended = [&] {
    const std::lock_guard lock(mutex_);
    return stopping_;
  };
  poll_until(Clock::time_point::max(), [&] { return arrived() || training_ended(); });
  if (arrived()) return true;
  {
    const std::lock_guard lock(mutex_);
    if (k >= rounds_planned_) return false;
  }
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
  if (!poll_until(Clock::now() + timeout, arrived)) {
    throw std::runtime_error("adpsgd: rank " + std::to_string(peer) + " sent nothing for " +
                             "directed round " + std::to_string(first_round_ + k) + " within " +
                             std::to_string(timeout_seconds_) + " s (--comm-timeout)");
  }
  return true;
}

// One round as gossiper.py's BilatPushPull.mix does it: the active rank sends its model and then
// waits for its in-peer's; the passive one waits for its in-peer's, then sends its own as it was
// before averaging. Both average with the copy received, into x_ as it is by then (training may
// have folded in steps meanwhile).
void Adpsgd::run_directed_rounds() {
  const kernels::Place place = stream_->place();
  const std::size_t bytes = x_.size() * sizeof(float);
  outgoing_.resize(x_.size(), place);
  incoming_.resize(x_.size(), place);
  const auto send_model = [&](int peer) {
    {
      const std::lock_guard lock(mutex_);
      training_done_->wait(place);
      kernels::ops::copy(x_.buffer().on(place), outgoing_.buffer());
      gossip_done_->record(place);
    }
    send_header(peer);
    const comm::Outgoing send{outgoing_.buffer().data(), bytes, peer};
    gossip_comm_->send_receive(std::span(&send, 1), {}, place);
  };
  const auto receive_model = [&](int peer) {
    gossip_comm_->receive(header_, peer);
    check_header(header_);
    const comm::Incoming receive{incoming_.buffer().data(), bytes, peer};
    gossip_comm_->send_receive({}, std::span(&receive, 1), place);
    gossip_comm_->synchronize(place);
  };
  for (std::uint64_t k = 0;; ++k) {
    const std::uint64_t round = first_round_ + k;
    const int out = topology_->out_peers(comm_.rank(), round).front();
    const int in = topology_->in_peers(comm_.rank(), round).front();
    Stopwatch watch;  // an active rank's wait for its in-peer counts; a passive's idle wait not
    if (active()) {
      if (!may_start_exchange(k)) break;
      watch.restart();
      send_model(out);
      wait_for_round_message(in, k);
      receive_model(in);
    } else {
      if (!wait_for_round_message(in, k)) break;
      watch.restart();
      receive_model(in);
      send_model(out);
    }
    const std::lock_guard lock(mutex_);
    average_with_incoming(watch.seconds());
  }
  gossip_comm_->synchronize(place);  // the last model sent has left
}

void Adpsgd::save_state(StateWriter& out) {
  Gossip::save_state(out);
  const std::lock_guard lock(mutex_);
  out.write(trained_);
  // Every rank saves the same round index, whatever its thread had done: the one after the last
  // planned round of the epochs so far. Resumed runs start there together.
  out.write(first_round_ + rounds_planned_);
  std::vector<float> values(x_.size());
  for (const kernels::ops::Storage<float>* model : {&x_, &last_}) {
    if (gossip_done_) gossip_done_->wait(model->buffer().place());
    kernels::ops::copy_to_host(model->buffer(), values);
    out.write(std::span<const float>(values));
  }
}

void Adpsgd::load_state(StateReader& in) {
  Gossip::load_state(in);
  const std::lock_guard lock(mutex_);
  trained_ = resumed_at_ = in.read<std::uint64_t>();
  first_round_ = in.read<std::uint64_t>();
  std::vector<float> values;
  for (kernels::ops::Storage<float>* model : {&x_, &last_}) {
    in.read(values);
    model->resize(values.size(), kernels::kHost);
    kernels::ops::copy_from_host(values, model->buffer());
  }
}

}  // namespace commsgd::algorithms
