#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithms/gossip/gossip.hpp"

namespace commsgd::algorithms {

// AD-PSGD: every rank trains without waiting for anyone, while its gossip thread averages its
// parameters with peers of a bipartite graph: odd (active) ranks start one exchange per local
// iteration at most, even (passive) ranks answer. Since passive ranks never wait for a message
// of their own before answering, no cycle of waits can form. Two mixings (--gossip-mixing):
//   symmetric (Lian et al., ICML 2018): atomic pairs. The active rank sends x_i, the passive one
//     replies x_j, both set x ← (x_i + x_j)/2 (the sum of the models is kept exactly). Protocol:
//     active → passive: x_i (request); passive → active: x_j (reply); active → every passive at
//     the end: an empty message (done). A passive thread ends when every active rank has said
//     done; MPI's per-pair ordering puts each done after its requests.
//   directed (the SGP code's AD-PSGD, gossiper.py BilatPushPull on graph_type 1): at round k
//     with offset o_k, rank r sends its x to r + o_k and sets x ← (x + x_{r−o_k})/2 with what
//     r − o_k sent; active ranks send first, passive ones on hearing from their in-peer. Every
//     round involves every rank, so all ranks run the same number of rounds: one per iteration
//     of the epochs begun (the nominal count per rank, the same everywhere); a rank that trained
//     fewer iterations finishes its rounds when training ends, before its thread stops.
// Each epoch's budget of P·iterations is shared through a counter on rank 0 (MPI Fetch_and_op):
// a rank trains until the job has claimed it all. Once training ends, a wait for a peer longer
// than --comm-timeout fails the run instead of hanging.
//
// Every model sent is announced by a header on the host (its size in floats; an empty message is
// the symmetric "done"): ranks probe for headers, which works wherever the models are (nothing
// can be probed on a device), and the model follows as a message of known size on its buffer's
// place. On a device the gossip thread has a stream of its own (ops::SideStream), and the two
// threads order their work on x_ with two stream points: each, holding the lock, makes its
// stream wait for the other's latest work on x_, enqueues its own and marks it. Nothing crosses
// the bus.
//
// Thread safety: mutex_ guards x_ (the rank's gossiped parameters), the counters and the failure
// (traffic is counted here, not read from the communicator, whose counters the thread updates).
// The training thread holds it only to fold its step into x_. The symmetric gossip thread holds
// it for a whole exchange, which is what makes the pairwise average atomic; the directed one
// only to copy x_ out and to average into it, as the SGP code's gossip_lock does.
class Adpsgd final : public Gossip {
 public:
  Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing,
         double timeout_seconds);
  ~Adpsgd() override;

  void begin_training(Buffer<const float> params) override;
  // Claims the iteration from the job's shared budget, so fast ranks run more of them.
  bool next_iteration(long done, long iterations) override;
  bool lockstep() const override { return false; }
  bool works_in(kernels::Memory) const override { return true; }
  void after_step(Buffer<float> params) override;
  void end_training() override;
  AlgorithmStats stats() const override;
  // Taken between epochs, while the gossip thread goes on: x_ is saved as it stands between two
  // exchanges. An exchange under way at that moment may land in the peer's checkpoint and not
  // in this rank's; averaging tolerates that, so resuming is close to, not exactly, a run never
  // stopped.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 private:
  bool active() const { return comm_.rank() % 2 == 1; }
  void gossip();  // the gossip thread
  void initiate_exchanges();
  void serve_exchanges();
  void run_directed_rounds();
  // Whether exchange k (counted from begin_training) may start on an active rank: training is
  // past it, or has ended and the directed rounds are not all done. Waits until either holds or
  // the thread is to stop; false then.
  bool may_start_exchange(std::uint64_t k);
  // Polls for a message from `peer` for the directed round k. No deadline while training goes
  // on (peers pace the rounds by their training); after it, --comm-timeout. False when training
  // has ended and round k is not one of the run's (a passive rank's way out).
  bool wait_for_round_message(int peer, std::uint64_t k);
  // The header of a model of x_'s size, to `peer`.
  void send_header(int peer);
  // Throws unless `header` announces a model of x_'s size.
  void check_header(std::span<const std::byte> header) const;
  // Sends x_ to `peer` and receives its model into incoming_ at once, and waits for both (lock
  // held).
  void swap_models(int peer);
  // Averages x_ with incoming_ (lock held) and counts the exchange.
  void average_with_incoming(double seconds);
  // Stops the gossip thread and waits for it while it makes progress: false if no exchange
  // completed within the timeout and the thread did not end.
  bool stop_gossip(double timeout_seconds);

  const GossipMixing mixing_;
  const double timeout_seconds_;
  std::unique_ptr<comm::Communicator> gossip_comm_;
  std::unique_ptr<comm::SharedCounter> budget_;
  // The gossip thread's stream, and the latest work of each thread on x_; made by
  // begin_training, where the parameters are. The stream outlives the buffers below.
  std::unique_ptr<kernels::ops::SideStream> stream_;
  std::unique_ptr<kernels::ops::StreamPoint> training_done_, gossip_done_;
  std::int64_t budget_end_ = 0;  // the counter value at which this epoch's budget runs out

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  kernels::ops::Storage<float> x_;     // the parameters both threads work on
  kernels::ops::Storage<float> last_;  // what the training thread was handed after its last step
  kernels::ops::Storage<float> outgoing_, incoming_;  // the gossip thread's models in transit
  std::vector<std::byte> header_;                     // the gossip thread's last header received
  std::uint64_t trained_ = 0;
  std::uint64_t resumed_at_ = 0;       // trained_ as restored from a checkpoint
  std::uint64_t exchanges_ = 0;        // completed since begin_training
  std::uint64_t rounds_planned_ = 0;   // directed: the iterations of the epochs begun since then
  std::uint64_t first_round_ = 0;      // directed: the round index of exchange 0 (same everywhere)
  std::uint64_t bytes_exchanged_ = 0;  // each way: an exchange sends and receives one model
  double exchange_seconds_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false, finished_ = false;
  std::thread thread_;
};

}  // namespace commsgd::algorithms
