#include "algorithms/gossip/osgp.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "algorithms/stored_values.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {

Osgp::Osgp(comm::Communicator& comm, std::unique_ptr<Topology> topology, OsgpOverlap overlap,
           int limit)
    : Gossip(comm, std::move(topology)), overlap_(overlap), limit_(limit) {
  make_engine(comm);
  if (limit_ < 0) throw std::invalid_argument("--max-staleness and --synch-freq must be >= 0");
}

void Osgp::run(comm::Channel& channel, Exchange& exchange) {
  const kernels::Place place = channel.place;
  const Buffer<float> message = exchange.message.buffer().on(place);
  const std::size_t in_degree = exchange.in.size();
  exchange.heads.resize(1 + in_degree, place);
  const Buffer<float> heads = exchange.heads.buffer();
  kernels::ops::copy_from_host(std::span(&exchange.weight, 1), heads.subspan(0, 1));
  // Each slice of the message, once sent, becomes the sum of that slice from the in-peers.
  exchange_in_slices(channel.comm, message, exchange.out, exchange.in, scratch_,
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
  channel.comm.synchronize(place);
  std::vector<float> weights(in_degree);
  kernels::ops::copy_to_host(heads.subspan(1, in_degree), weights);
  exchange.weight = 0;
  for (const float w : weights) exchange.weight += w;
  exchange.arrived = in_degree > 0;
}

void Osgp::wait_until_outstanding(std::size_t outstanding) {
  // The engine completes exchanges in the order they were started.
  if (started_.size() > outstanding) started_[started_.size() - outstanding - 1].work.wait();
}

void Osgp::absorb_arrivals(Buffer<float> x) {
  while (!started_.empty() && started_.front().work.completed()) {
    Exchange& sum = started_.front();
    if (const std::exception_ptr error = sum.work.error()) std::rethrow_exception(error);
    if (sum.arrived) {
      push_sum_.absorb_weight(sum.weight);
      kernels::ops::add(x, sum.message.buffer().on(x.place()));
    }
    spare_.push_back(std::move(sum));
    started_.pop_front();
  }
}

std::vector<const Osgp::Exchange*> Osgp::arrivals() const {
  std::vector<const Exchange*> arrived;
  for (const Exchange& sum : started_) {
    if (sum.work.completed() && sum.arrived) arrived.push_back(&sum);
  }
  return arrived;
}

std::vector<float> Osgp::pending_weights() const {
  std::vector<float> weights;
  for (const Exchange* sum : arrivals()) weights.push_back(sum->weight);
  return weights;
}

void Osgp::start_exchange(Buffer<float> x) {
  const kernels::Place place = engine().place(x.place().memory);
  Exchange& exchange = started_.emplace_back();
  if (!spare_.empty()) {
    exchange = std::move(spare_.back());
    spare_.pop_back();
  }
  exchange.arrived = false;
  exchange.out = topology_->out_peers(comm_.rank(), iteration_);
  exchange.in = topology_->in_peers(comm_.rank(), iteration_);
  exchange.weight = push_sum_.split(x, exchange.out.size());
  exchange.message.resize(x.size(), x.place());
  kernels::ops::copy(x, exchange.message.buffer());
  kernels::ops::order_after(place, x.place());
  stats_.entries_sent += exchange.out.size() * x.size();
  exchange.work = engine().start("osgp: gossip exchange",
                                 [this, &exchange](comm::Channel& c) { run(c, exchange); });
  ++exchanges_started_;
  most_in_flight_ = std::max<std::uint64_t>(most_in_flight_, started_.size());
  ++iteration_;
}

bool Osgp::ready_for_next_exchange(Buffer<float> x) {
  for (const Exchange& exchange : started_) {
    if (const std::exception_ptr error = exchange.work.error()) std::rethrow_exception(error);
  }
  if (exchanges_started_ > 0 && steps_since_start_ < limit_) {
    absorb_arrivals(x);  // what landed early is absorbed, not yet followed
    ++steps_since_start_;
    return false;
  }
  if (!started_.empty()) {
    const Stopwatch watch;
    wait_until_outstanding(0);
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals(x);
  }
  steps_since_start_ = 0;
  return true;
}

void Osgp::begin_training(Buffer<const float> params) {
  for (Exchange& sum : started_) kernels::ops::relocate(sum.message, params.place());
}

void Osgp::before_step(Buffer<float> params) {
  push_sum_.to_numerator(params);
}

void Osgp::after_step(Buffer<float> x) {
  stats_.entries_offered += x.size();
  if (overlap_ == OsgpOverlap::one_in_flight) {
    if (ready_for_next_exchange(x)) start_exchange(x);
  } else {
    start_exchange(x);
    const Stopwatch watch;
    wait_until_outstanding(static_cast<std::size_t>(limit_));
    stats_.wait_seconds += watch.seconds();
    absorb_arrivals(x);
  }
  push_sum_.to_model(x);
}

void Osgp::begin_evaluation(Buffer<float> params, bool own_model) {
  wait_until_outstanding(0);
  // Every exchange has completed, and none starts before the next step: the arrivals stay as
  // they are, pending, and the model evaluated is the one they will make.
  keep_own_model(params);
  push_sum_.to_numerator(params);
  for (const Exchange* sum : arrivals())
    kernels::ops::add(params, sum->message.buffer().on(params.place()));
  push_sum_.to_model(params, pending_weights());
  consensus_.measure(params, comm_, !own_model);
}

kernels::ops::Storage<float> Osgp::idle_buffer() {
  if (spare_.empty()) return {};
  kernels::ops::Storage<float> buffer = std::move(spare_.back().message);
  spare_.pop_back();
  return buffer;
}

void Osgp::return_idle_buffer(kernels::ops::Storage<float>&& buffer) {
  spare_.emplace_back().message = std::move(buffer);
}

float Osgp::flushed_weight() {
  wait_until_outstanding(0);
  return push_sum_.weight(pending_weights());
}

std::uint64_t Osgp::most_in_flight() const {
  return most_in_flight_;
}

AlgorithmStats Osgp::stats() const {
  return with_engine_totals(stats_);
}

void Osgp::save_state(StateWriter& out) {
  Gossip::save_state(out);
  push_sum_.save(out);
  wait_until_outstanding(0);
  const std::vector<const Exchange*> arrived = arrivals();
  out.write(static_cast<std::uint64_t>(arrived.size()));
  for (const Exchange* sum : arrived) {
    out.write(sum->weight);
    write_values(out, sum->message.buffer());
  }
  out.write(steps_since_start_);
}

void Osgp::load_state(StateReader& in) {
  Gossip::load_state(in);
  push_sum_.load(in);
  started_.clear();
  started_.resize(in.read<std::uint64_t>());
  for (Exchange& sum : started_) {
    sum.weight = in.read<float>();
    read_values(in, sum.message);
    sum.arrived = true;
  }
  exchanges_started_ = iteration_;
  steps_since_start_ = in.read<int>();
}

}  // namespace commsgd::algorithms
