#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "algorithms/comm/engine.hpp"
#include "algorithms/engine_backed.hpp"
#include "algorithms/gossip/gossip.hpp"

namespace commsgd::algorithms {

// AD-PSGD: every rank trains without waiting for anyone, while its gossip averages its
// parameters with peers of a bipartite graph: odd (active) ranks start one exchange per local
// iteration at most, even (passive) ranks answer. Since passive ranks never wait for a message
// of their own before answering, no cycle of waits can form. Two mixings (--gossip-mixing):
//   symmetric (Lian et al., ICML 2018): atomic pairs. The active rank sends x_i, the passive one
//     replies x_j, both set x ← (x_i + x_j)/2 (the sum of the models is kept exactly). Protocol:
//     active → passive: x_i (request); passive → active: x_j (reply); active → every passive at
//     the end: an empty message (done). A passive rank stops answering once every active rank has
//     said done; MPI's per-pair ordering puts each done after its requests.
//   directed (the SGP code's AD-PSGD, gossiper.py BilatPushPull on graph_type 1): at round k
//     with offset o_k, rank r sends its x to r + o_k and sets x ← (x + x_{r−o_k})/2 with what
//     r − o_k sent; active ranks send first, passive ones on hearing from their in-peer. Every
//     round involves every rank, so all ranks run the same number of rounds: one per iteration
//     of the epochs begun (the nominal count per rank, the same everywhere); a rank that trained
//     fewer iterations finishes its rounds when training ends.
// Each epoch's budget of P·iterations is shared through a counter on rank 0 (MPI Fetch_and_op):
// a rank trains until the job has claimed it all. A wait for the gossip that sees no progress for
// --comm-timeout fails the run instead of hanging; while training goes on, an idle passive rank
// is not waiting (it cannot know how long its peers train).
//
// Every model sent is announced by a header on the host (its size in floats; an empty message is
// the symmetric "done"): ranks probe for headers, which works wherever the models are (nothing
// can be probed on a device), and the model follows as a message of known size on its buffer's
// place.
//
// The gossip is a communication engine's (comm/engine.hpp): an active rank's exchanges are its
// operations, started by the training thread after a step; a passive rank answers with a
// listener; a directed round chain is a listener too, which sends the next round as soon as the
// last has been averaged and training is past it, and otherwise ends, to be started again after
// the next step. The training thread touches x_ (the rank's gossiped parameters) only under an
// Engine::Pause, and the engine only in exclusive sections: a symmetric exchange is one section
// (which is what makes the pairwise average atomic); a directed round has two, to copy x_ out and
// to average into it, as the SGP code's gossip_lock does. On a device the engine works on a stream
// of its own, and the two sides order their work on x_ with two stream points: each, inside its
// section, makes its stream wait for the other's latest work on x_, enqueues its own and marks it.
// Nothing crosses the bus.
class Adpsgd : protected EngineBacked, public Gossip {
 public:
  Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing);

  void begin_training(Buffer<const float> params) override;
  // Claims the iteration from the job's shared budget, so fast ranks run more of them.
  bool next_iteration(long done, long iterations) override;
  bool lockstep() const override { return false; }
  bool works_in(kernels::Memory) const override { return true; }
  void after_step(Buffer<float> params) override;
  void end_training() override;
  AlgorithmStats stats() const override;
  // Taken between epochs, while the gossip goes on: x_ is saved as it stands between two
  // exchanges. An exchange under way at that moment may land in the peer's checkpoint and not
  // in this rank's; averaging tolerates that, so resuming is close to, not exactly, a run never
  // stopped.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 protected:
  ~Adpsgd() override = default;  // made as EngineStoppedFirst<Adpsgd>, by make_engine_backed

 private:
  bool active() const { return comm_.rank() % 2 == 1; }
  // The peers of directed round k (counted from begin_training).
  int round_out_peer(std::uint64_t k) const;
  int round_in_peer(std::uint64_t k) const;
  // Folds the local step into x_ and continues from the mixed model (under a pause).
  void fold_step(Buffer<float> params);
  // Symmetric, active: starts exchange k with this iteration's peer.
  void start_exchange(std::uint64_t k);
  // Symmetric, passive: answers a request from `from`; false once every active rank said done.
  bool answer(comm::Channel& channel, int from);
  // Directed: whether an active rank may start round k: training is past it, or has ended and
  // the round is one of the run's.
  bool may_start_round(std::uint64_t k) const;
  // Directed, active: sends round next_round_ and listens for the in-peer's model, going on while
  // may_start_round allows.
  void start_rounds();
  // Directed: handles round next_round_'s model from its in-peer; a passive rank sends its own
  // first. Returns whether the listener goes on.
  bool directed_round(comm::Channel& channel, int from);
  // Copies x_ out and sends it to `peer`, header first.
  void send_model(comm::Channel& channel, int peer);
  // Receives the in-peer's header and model into incoming_.
  void receive_model(comm::Channel& channel, int peer);
  // The header of a model of x_'s size, to `peer`.
  void send_header(comm::Channel& channel, int peer);
  // Throws unless `header` announces a model of x_'s size.
  void check_header(std::span<const std::byte> header) const;
  // Sends x_ to `peer` and receives its model into incoming_ at once, and waits for both.
  void swap_models(comm::Channel& channel, int peer);
  // Averages x_ with incoming_ (in an exclusive section).
  void average_with_incoming(comm::Channel& channel);
  // Throws the gossip's error, if it failed.
  void check_gossip() const;

  const GossipMixing mixing_;
  std::unique_ptr<comm::SharedCounter> budget_;
  // The latest work of each side on x_; made by begin_training, where the parameters are.
  std::unique_ptr<kernels::ops::StreamPoint> training_done_, gossip_done_;
  std::int64_t budget_end_ = 0;  // the counter value at which this epoch's budget runs out

  kernels::ops::Storage<float> x_;     // the parameters both sides work on
  kernels::ops::Storage<float> last_;  // what the training thread was handed after its last step
  kernels::ops::Storage<float> outgoing_, incoming_;  // the engine's models in transit
  std::vector<std::byte> header_;                     // the engine's last header received
  // What the training thread tells the engine's listeners.
  std::atomic<std::uint64_t> trained_ = 0;
  std::atomic<std::uint64_t> rounds_planned_ = 0;  // directed: the iterations of the epochs begun
  std::atomic<bool> training_ended_ = false;
  std::uint64_t resumed_at_ = 0;   // trained_ as restored from a checkpoint
  std::uint64_t first_round_ = 0;  // directed: the round index of round 0 (same everywhere)
  // The gossip's own (the engine's while gossip_ runs, the training thread's once it completed):
  std::uint64_t next_round_ = 0;  // directed: the next round (or symmetric active: exchange)
  int actives_done_ = 0;          // symmetric, passive: the active ranks that said done
  comm::Work gossip_;             // the exchange, listener or round chain under way
};

}  // namespace commsgd::algorithms
