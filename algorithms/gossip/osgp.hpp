#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithms/gossip/gossip.hpp"
#include "algorithms/gossip/push_sum.hpp"

namespace commsgd::algorithms {

// Overlap SGP: SGP whose mixing message of iteration t travels on a communication thread while
// iteration t+1 computes. Arrivals are added to (x, w) when they have landed; a rank blocks only
// when the exchanges of more than --max-staleness τ past iterations are still outstanding, and
// fails (instead of hanging) when one takes longer than --comm-timeout.
//
// Thread safety: the training thread owns push_sum_ and the parameters. The two threads share
// only what mutex_ guards: the queue of exchanges to run, the sum of what arrived (incoming_),
// the count of finished exchanges, the traffic counters and a failure. The comm thread talks
// over its own duplicate of the communicator, so its messages never meet the trainer's.
class Osgp final : public Gossip {
 public:
  Osgp(comm::Communicator& comm, std::unique_ptr<Topology> topology, int max_staleness,
       double timeout_seconds);
  ~Osgp() override;

  void after_step(std::span<float> params) override;
  // Waits for every exchange in flight first, so the average includes all of the mass.
  std::span<const float> model_for_evaluation(std::span<const float> params) override;
  AlgorithmStats stats() const override;
  // Waits for every exchange in flight, then saves (x, w) and the arrivals not yet added, which
  // the next step adds as it would have. The resumed run differs from one never stopped only in
  // that those exchanges all landed before the checkpoint instead of up to τ iterations late.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;
  // This rank's push-sum weight once every exchange in flight has landed.
  float flushed_weight();

 private:
  struct Exchange {
    std::vector<float> message;
    std::vector<int> out, in;
  };

  void communicate();  // the comm thread's loop
  // Waits (on lock) until at most `outstanding` exchanges are unfinished; throws on a failure of
  // the comm thread or after the timeout.
  void wait_until_outstanding(std::unique_lock<std::mutex>& lock, std::uint64_t outstanding);
  // Adds what arrived to push_sum_ (lock held).
  void absorb_arrivals();
  // The push-sum state with every exchange in flight landed, leaving this one's as it is.
  PushSum flushed();

  const int max_staleness_;
  const double timeout_seconds_;
  std::unique_ptr<comm::Communicator> thread_comm_;
  PushSum push_sum_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Exchange> queue_;
  std::vector<float> incoming_;
  bool has_incoming_ = false;
  std::uint64_t finished_ = 0;
  double thread_seconds_ = 0;
  std::uint64_t thread_bytes_sent_ = 0, thread_bytes_received_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace commsgd::algorithms
