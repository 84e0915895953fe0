#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/gossip/consensus.hpp"
#include "algorithms/gossip/slices.hpp"
#include "algorithms/gossip/topology.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// What a rank does with one slice of a mixing round once the slice's messages have all gone and
// come: `received` holds the slice [offset, offset + count) of every in-peer's message, back to
// back in the order of the in-peers. The message's own slice has been sent, so it may be
// overwritten (with what it mixes into, say).
using SliceArrived =
    std::function<void(std::size_t offset, std::size_t count, Buffer<const float> received)>;

// A few floats that travel with a round's first slice (push-sum's weight), in the message's
// place: `send` goes to every out-peer, and `received` takes one head per in-peer, in the order
// of the in-peers.
struct RoundHead {
  Buffer<const float> send;
  Buffer<float> received;
};

// One mixing round: sends `message` to every rank of `out` and receives a message of the same
// size from every rank of `in`, a slice at a time. Each slice's sends and receives are posted at
// once, so no pattern of peers can deadlock. `scratch` is where slices arrive, in the message's
// place: one slice per in-peer, kept by the caller so that a round allocates nothing once it has
// run. On a device the transfers and `arrived`'s work are enqueued on the message's stream.
void exchange_in_slices(comm::Communicator& comm, Buffer<const float> message,
                        const std::vector<int>& out, const std::vector<int>& in,
                        kernels::ops::Storage<float>& scratch, const SliceArrived& arrived,
                        RoundHead head = {}, std::size_t slice = kSliceFloats);

// What the gossip algorithms share: no gradient synchronization (each rank steps on its own
// gradient), mixing of parameters after the step, and evaluation of the consensus average.
class Gossip : public Algorithm {
 public:
  // barrier_before_rounds: mix_round waits at a barrier first (--barrier-before-communicate).
  Gossip(comm::Communicator& comm, std::unique_ptr<Topology> topology,
         bool barrier_before_rounds = false)
      : comm_(comm), topology_(std::move(topology)), barrier_(barrier_before_rounds) {}

  void synchronize_gradients(Buffer<float>) override {}
  void begin_evaluation(Buffer<float> params, bool own_model) override;
  void end_evaluation(Buffer<float> params) override { restore_own_model(params); }
  std::optional<double> consensus_distance() const override { return consensus_.distance(); }
  AlgorithmStats stats() const override { return stats_; }
  // The iteration count, which picks each iteration's peers on time-varying topologies.
  void save_state(StateWriter& out) override { out.write(iteration_); }
  void load_state(StateReader& in) override { iteration_ = in.read<std::uint64_t>(); }

 protected:
  // exchange_in_slices on the training thread: the whole round is time training waits, and
  // counts as communication too (on a device, with the mixing it enqueued, once the stream has
  // caught up: the round is waited for before it counts as done). With the barrier, the wait
  // for the slowest rank before the round is wait alone.
  void mix_round(Buffer<const float> message, const std::vector<int>& out,
                 const std::vector<int>& in, const SliceArrived& arrived, RoundHead head = {});
  // While evaluation has other values in the parameters, the rank's own model waits in a copy,
  // in a buffer the algorithm has idle if it has one (idle_buffer), else a new one.
  void keep_own_model(Buffer<const float> params);
  void restore_own_model(Buffer<float> params);
  virtual kernels::ops::Storage<float> idle_buffer() { return {}; }
  virtual void return_idle_buffer(kernels::ops::Storage<float>&& /*buffer*/) {}

  comm::Communicator& comm_;
  std::unique_ptr<Topology> topology_;
  ConsensusAverage consensus_;
  AlgorithmStats stats_;
  std::uint64_t iteration_ = 0;

 private:
  bool barrier_ = false;
  kernels::ops::Storage<float> scratch_;    // mix_round's arriving slices
  kernels::ops::Storage<float> own_model_;  // keep_own_model's copy, during evaluation
};

}  // namespace commsgd::algorithms
