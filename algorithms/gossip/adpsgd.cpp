#include "algorithms/gossip/adpsgd.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "algorithms/stopwatch.hpp"
#include "algorithms/stored_values.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {

Adpsgd::Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing)
    : Gossip(comm, std::move(topology)), mixing_(mixing), budget_(comm.shared_counter()) {
  make_engine(comm);
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

int Adpsgd::round_out_peer(std::uint64_t k) const {
  return topology_->out_peers(comm_.rank(), first_round_ + k).front();
}

int Adpsgd::round_in_peer(std::uint64_t k) const {
  return topology_->in_peers(comm_.rank(), first_round_ + k).front();
}

void Adpsgd::begin_training(Buffer<const float> params) {
  const kernels::Place place = params.place();
  const kernels::Place engine_place = engine().place(place.memory);
  if (!training_done_) {
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
  outgoing_.resize(x_.size(), engine_place);
  incoming_.resize(x_.size(), engine_place);
  training_done_->record(place);
  rounds_planned_ = 0;
  training_ended_ = false;
  next_round_ = 0;
  actives_done_ = 0;
  gossip_ = {};
  if (mixing_ == GossipMixing::directed && !active()) {
    gossip_ = engine().listen(
        "adpsgd: directed rounds",
        {.peer = [this] { return round_in_peer(next_round_); },
         .on_message = [this](comm::Channel& c, int from) { return directed_round(c, from); },
         .done = [this] { return training_ended_ && next_round_ >= rounds_planned_; }});
  } else if (mixing_ == GossipMixing::symmetric && !active()) {
    gossip_ = engine().listen(
        "adpsgd: answering gossip requests",
        {.peer = [] { return comm::Communicator::kAnyPeer; },
         .on_message = [this](comm::Channel& c, int from) { return answer(c, from); },
         .done = {}});
  }
}

bool Adpsgd::next_iteration(long done, long iterations) {
  // Every rank asks at least once per epoch and stops at its first refusal, so an epoch takes
  // P·iterations grants and then exactly P refusals from the counter.
  const std::int64_t ranks = comm_.size();
  if (done == 0) {
    budget_end_ += ranks * iterations;
    rounds_planned_ += static_cast<std::uint64_t>(iterations);
  }
  const bool granted = budget_->fetch_add(1) < budget_end_;
  if (!granted) budget_end_ += ranks;
  return granted;
}

void Adpsgd::check_gossip() const {
  if (const std::exception_ptr error = gossip_.error()) std::rethrow_exception(error);
}

void Adpsgd::fold_step(Buffer<float> params) {
  const Stopwatch waiting;
  const comm::Engine::Pause pause = engine().pause();
  // The only wait training ever has: for an exchange of this rank's that is under way.
  stats_.wait_seconds += waiting.seconds();
  check_gossip();
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
}

void Adpsgd::after_step(Buffer<float> params) {
  fold_step(params);
  // A step after end_training() (picking up the last exchanges) starts none.
  if (!active() || training_ended_ || !gossip_.completed()) return;
  if (mixing_ == GossipMixing::symmetric) {
    // At most one exchange per local iteration, so gossip never outruns training.
    start_exchange(next_round_++);
  } else if (may_start_round(next_round_)) {
    start_rounds();
  }
}

void Adpsgd::end_training() {
  budget_->release();
  training_ended_ = true;
  if (active()) {
    gossip_.wait();
    if (mixing_ == GossipMixing::directed) {
      for (; may_start_round(next_round_); gossip_.wait()) start_rounds();
    } else {
      engine()
          .start("adpsgd: telling the passive ranks it is done",
                 [](comm::Channel& c) {
                   for (int passive = 0; passive < c.comm.size(); passive += 2) {
                     c.comm.send(nullptr, 0, passive);
                   }
                 })
          .wait();
    }
  } else {
    gossip_.wait();
  }
  if (mixing_ == GossipMixing::directed) {
    engine()
        .start("adpsgd: the last model sent", [](comm::Channel& c) { c.comm.synchronize(c.place); })
        .wait();
  }
  // Whatever touches x_ next (a last step, the buffers' release) comes after the last average.
  const comm::Engine::Pause pause = engine().pause();
  gossip_done_->wait(x_.buffer().place());
}

AlgorithmStats Adpsgd::stats() const {
  return with_engine_totals(stats_);
}

void Adpsgd::send_header(comm::Channel& channel, int peer) {
  const std::uint64_t floats = x_.size();
  channel.comm.send(&floats, sizeof floats, peer);
}

void Adpsgd::check_header(std::span<const std::byte> header) const {
  std::uint64_t floats = 0;
  if (header.size() == sizeof floats) std::memcpy(&floats, header.data(), sizeof floats);
  if (floats != x_.size()) throw std::runtime_error("adpsgd: a peer's parameters differ in size");
}

void Adpsgd::swap_models(comm::Channel& channel, int peer) {
  const kernels::Place place = channel.place;
  const std::size_t bytes = x_.size() * sizeof(float);
  training_done_->wait(place);
  const comm::Outgoing send{x_.buffer().data(), bytes, peer};
  const comm::Incoming receive{incoming_.buffer().data(), bytes, peer};
  channel.comm.send_receive(std::span(&send, 1), std::span(&receive, 1), place);
  channel.comm.synchronize(place);
}

void Adpsgd::average_with_incoming(comm::Channel& channel) {
  const kernels::Place place = channel.place;
  training_done_->wait(place);
  kernels::ops::add_blocks(x_.buffer().on(place), incoming_.buffer(), 0.5f);
  gossip_done_->record(place);
}

void Adpsgd::start_exchange(std::uint64_t k) {
  const int peer = topology_->out_peers(comm_.rank(), resumed_at_ + k).front();
  gossip_ = engine().start("adpsgd: gossip exchange with rank " + std::to_string(peer),
                           [this, peer](comm::Channel& c) {
                             c.exclusive([&] {
                               send_header(c, peer);
                               c.await_message(peer);
                               c.comm.receive(header_, peer);
                               check_header(header_);
                               swap_models(c, peer);
                               average_with_incoming(c);
                             });
                           });
}

bool Adpsgd::answer(comm::Channel& channel, int from) {
  channel.comm.receive(header_, from);
  if (header_.empty()) return ++actives_done_ < channel.comm.size() / 2;
  check_header(header_);
  channel.exclusive([&] {
    send_header(channel, from);
    swap_models(channel, from);
    average_with_incoming(channel);
  });
  return true;
}

bool Adpsgd::may_start_round(std::uint64_t k) const {
  return k < rounds_planned_ && (training_ended_ || trained_ - resumed_at_ > k);
}

void Adpsgd::start_rounds() {
  engine().start("adpsgd: directed round",
                 [this](comm::Channel& c) { send_model(c, round_out_peer(next_round_)); });
  gossip_ = engine().listen(
      "adpsgd: directed rounds",
      {.peer = [this] { return round_in_peer(next_round_); },
       .on_message = [this](comm::Channel& c, int from) { return directed_round(c, from); },
       .done = {}});
}

// One round as gossiper.py's BilatPushPull.mix does it: the active rank sends its model and then
// waits for its in-peer's; the passive one waits for its in-peer's, then sends its own as it was
// before averaging. Both average with the copy received, into x_ as it is by then (training may
// have folded in steps meanwhile).
bool Adpsgd::directed_round(comm::Channel& channel, int from) {
  receive_model(channel, from);
  if (!active()) send_model(channel, round_out_peer(next_round_));
  channel.exclusive([&] { average_with_incoming(channel); });
  ++next_round_;
  if (!active()) return true;
  if (!may_start_round(next_round_)) return false;
  send_model(channel, round_out_peer(next_round_));
  return true;
}

void Adpsgd::send_model(comm::Channel& channel, int peer) {
  const kernels::Place place = channel.place;
  channel.exclusive([&] {
    training_done_->wait(place);
    kernels::ops::copy(x_.buffer().on(place), outgoing_.buffer());
    gossip_done_->record(place);
  });
  send_header(channel, peer);
  const comm::Outgoing send{outgoing_.buffer().data(), x_.size() * sizeof(float), peer};
  channel.comm.send_receive(std::span(&send, 1), {}, place);
}

void Adpsgd::receive_model(comm::Channel& channel, int peer) {
  channel.comm.receive(header_, peer);
  check_header(header_);
  const comm::Incoming receive{incoming_.buffer().data(), x_.size() * sizeof(float), peer};
  channel.comm.send_receive({}, std::span(&receive, 1), channel.place);
  channel.comm.synchronize(channel.place);
}

void Adpsgd::save_state(StateWriter& out) {
  Gossip::save_state(out);
  const comm::Engine::Pause pause = engine().pause();
  out.write(static_cast<std::uint64_t>(trained_));
  // Every rank saves the same round index, whatever its gossip had done: the one after the last
  // planned round of the epochs so far. Resumed runs start there together.
  out.write(first_round_ + rounds_planned_);
  for (const kernels::ops::Storage<float>* model : {&x_, &last_}) {
    if (gossip_done_) gossip_done_->wait(model->buffer().place());
    write_values(out, model->buffer());
  }
}

void Adpsgd::load_state(StateReader& in) {
  Gossip::load_state(in);
  const comm::Engine::Pause pause = engine().pause();
  resumed_at_ = in.read<std::uint64_t>();
  trained_ = resumed_at_;
  first_round_ = in.read<std::uint64_t>();
  for (kernels::ops::Storage<float>* model : {&x_, &last_}) read_values(in, *model);
}

}  // namespace commsgd::algorithms
