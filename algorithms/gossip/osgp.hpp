#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "algorithms/comm/engine.hpp"
#include "algorithms/engine_backed.hpp"
#include "algorithms/gossip/gossip.hpp"
#include "algorithms/gossip/push_sum.hpp"

namespace commsgd::algorithms {

// Overlap SGP: SGP whose mixing messages travel in the background while training goes on.
// Arrivals are added to (x, w) when they have landed, and a rank fails (instead of hanging) when
// an exchange takes longer than --comm-timeout. When exchanges start, and when a rank waits for
// them, is one of two overlaps (--osgp-overlap):
//   bounded staleness (the paper's): the message of iteration t leaves while t+1 computes, one
//     exchange every iteration; a rank blocks only when the exchanges of more than --max-staleness
//     τ past iterations are unfinished;
//   one in flight (the SGP code's, distributed.py GossipDataParallel with overlap): a new exchange
//     starts only once the previous one has been absorbed; a rank waits for an exchange once it
//     has taken --synch-freq s steps without it (s = 0: every step waits for the last exchange).
//     What lands earlier is absorbed at once, but the next exchange starts s + 1 steps after the
//     last on every rank: the SGP code starts it as soon as the last has landed, which depends on
//     timing, so its ranks can start different numbers of rounds and wait on peers that never
//     run them; with a fixed cadence every rank runs the same rounds. With s = 0 the two agree.
//
// Memory: x is the parameters (push_sum.hpp), wherever they are. An exchange's message is a copy
// of the share sent (x changes while it travels), and the same buffer comes back holding the sum
// of what the in-peers sent, added slice by slice as the slices arrive (gossip.hpp); the shares'
// weights travel beside it. Once absorbed, it is reused for a later exchange: one model-sized
// buffer with one exchange in flight, up to τ + 1 with bounded staleness. Evaluation keeps the
// rank's model in one of them while it is idle.
//
// Each exchange is an operation of a communication engine (comm/engine.hpp), which runs them in
// the order started, over a communicator of its own, and on a device on a stream of its own, so a
// message waiting on a peer never holds up the training stream: the message is copied on the
// training stream, which the engine's then follows (an event), and the operation waits for its
// stream before it completes, so what it hands back is complete. Nothing crosses the bus but the
// weights, a float per peer. The training thread owns everything else: push_sum_, the parameters,
// the exchanges once completed.
class Osgp : protected EngineBacked, public Gossip {
 public:
  // limit: τ for bounded staleness, s for one in flight.
  Osgp(comm::Communicator& comm, std::unique_ptr<Topology> topology, OsgpOverlap overlap,
       int limit);

  bool works_in(kernels::Memory) const override { return true; }

  // Moves arrivals restored from a checkpoint to where the parameters are.
  void begin_training(Buffer<const float> params) override;
  void before_step(Buffer<float> params) override;
  void after_step(Buffer<float> x) override;
  // Waits for every exchange in flight first, and evaluates the model with every arrival added,
  // so the average includes all of the mass. The arrivals stay pending: the next step adds them,
  // as it would have.
  void begin_evaluation(Buffer<float> params, bool own_model) override;
  AlgorithmStats stats() const override;
  // Waits for every exchange in flight, then saves w (x is w times the parameters, which the
  // trainer saves) and the arrivals not yet added, which the next step adds as it would have. The
  // resumed run differs from one never stopped only in that those exchanges all landed before the
  // checkpoint instead of up to τ iterations late.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;
  // This rank's push-sum weight once every exchange in flight has landed.
  float flushed_weight();
  // The most exchanges this rank has had started and not yet absorbed at once.
  std::uint64_t most_in_flight() const;

 protected:
  ~Osgp() override = default;  // made as EngineStoppedFirst<Osgp>, by make_engine_backed

 private:
  struct Exchange {
    kernels::ops::Storage<float> message;  // the share sent; once completed, the sum that came in
    kernels::ops::Storage<float> heads;    // the share's weight, then the in-peers', on the wire
    float weight = 0;  // the share's weight; once completed, the sum of the in-peers' (on the host)
    std::vector<int> out, in;
    bool arrived = false;  // completed with in-peers' sums (restored from a checkpoint: too)
    comm::Work work;       // its operation; none for one restored from a checkpoint
  };

  // Runs one exchange on the engine's thread.
  void run(comm::Channel& channel, Exchange& exchange);
  // Waits until at most `outstanding` exchanges have not completed; throws on a failure or once
  // the wait limit passes without progress.
  void wait_until_outstanding(std::size_t outstanding);
  // Adds what arrived to (x, w): every completed exchange, oldest first, until one that has not.
  void absorb_arrivals(Buffer<float> x);
  // The exchanges completed and not yet absorbed that brought something, in order.
  std::vector<const Exchange*> arrivals() const;
  std::vector<float> pending_weights() const;
  // A spare message buffer, if there is one.
  kernels::ops::Storage<float> idle_buffer() override;
  void return_idle_buffer(kernels::ops::Storage<float>&& buffer) override;

  // Splits (x, w) and starts the share's exchange: the exchange of round iteration_.
  void start_exchange(Buffer<float> x);
  // One in flight: whether to start the next exchange now (waiting for the last one if it is
  // due), absorbing the last one if it has landed.
  bool ready_for_next_exchange(Buffer<float> x);

  const OsgpOverlap overlap_;
  const int limit_;
  PushSum push_sum_;
  kernels::ops::Storage<float> scratch_;  // the engine's, for the slices in transit
  std::deque<Exchange> started_;          // not yet absorbed, oldest first
  std::vector<Exchange> spare_;           // absorbed exchanges, whose buffers the next ones reuse
  std::uint64_t exchanges_started_ = 0, most_in_flight_ = 0;
  int steps_since_start_ = 0;  // one in flight: steps since the last exchange started
};

}  // namespace commsgd::algorithms
