#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithms/gossip/gossip.hpp"

namespace commsgd::algorithms {

// AD-PSGD (Lian et al., ICML 2018): every rank trains without waiting for anyone, while its
// gossip thread averages its parameters with one peer of the bipartite graph at a time, atomically
// for the pair: x_i, x_j ← (x_i + x_j)/2. Odd (active) ranks initiate one exchange per local
// iteration; even (passive) ranks serve whoever asks. Since passive ranks never wait on anyone,
// no cycle of waits can form. Each epoch's budget of P·iterations is shared through a counter on
// rank 0 (MPI Fetch_and_op): a rank trains until the job has claimed it all. An active rank that
// hears nothing back within --comm-timeout fails the run instead of hanging.
//
// Protocol on a duplicate communicator: active → passive: x_i (request); passive → active: x_j
// (reply); active → every passive at the end: an empty message (done). A passive thread ends when
// every active rank has said done; MPI's per-pair ordering puts each done after its requests.
//
// Thread safety: mutex_ guards x_ (the rank's gossiped parameters), the counters and the failure
// (traffic is counted here, not read from the communicator, whose counters the thread updates).
// The training thread holds it only to fold its step into x_; the gossip thread holds it for a
// whole exchange, which is what makes the pairwise average atomic.
class Adpsgd final : public Gossip {
 public:
  Adpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, double timeout_seconds);
  ~Adpsgd() override;

  void begin_training(std::span<const float> params) override;
  // Claims the iteration from the job's shared budget, so fast ranks run more of them.
  bool next_iteration(long done, long iterations) override;
  bool lockstep() const override { return false; }
  void after_step(std::span<float> params) override;
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
  void initiate_exchanges(std::uint64_t first_round);
  void serve_exchanges();
  // Averages x_ with a peer's parameters (lock held).
  void average_with(std::span<const std::byte> peer_params);
  // Stops the gossip thread and waits for it at most the timeout; false if it did not end.
  bool stop_gossip(double timeout_seconds);

  const double timeout_seconds_;
  std::unique_ptr<comm::Communicator> gossip_comm_;
  std::unique_ptr<comm::SharedCounter> budget_;
  std::int64_t budget_end_ = 0;  // the counter value at which this epoch's budget runs out

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<float> x_;     // the parameters both threads work on
  std::vector<float> last_;  // what the training thread was handed after its previous step
  std::uint64_t trained_ = 0;
  std::uint64_t resumed_at_ = 0;       // trained_ as restored from a checkpoint
  std::uint64_t bytes_exchanged_ = 0;  // each way: an exchange sends and receives one model
  double exchange_seconds_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false, finished_ = false;
  std::thread thread_;
};

}  // namespace commsgd::algorithms
