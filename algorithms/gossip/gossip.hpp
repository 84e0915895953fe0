#pragma once

#include <memory>
#include <span>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/gossip/consensus.hpp"
#include "algorithms/gossip/topology.hpp"

namespace commsgd::algorithms {

// Sends `message` to every rank of `out` and receives a message of the same size from every rank
// of `in`, into `received` back to back in the order of `in`. One round of point-to-point
// messages, all posted at once.
void exchange_with_peers(comm::Communicator& comm, std::span<const float> message,
                         const std::vector<int>& out, const std::vector<int>& in,
                         std::vector<float>& received);

// How a rank mixes with its peers of a round (--gossip-mixing): symmetric, with neighbours that
// are both in- and out-peers (Lian et al.'s papers), or directed, sending to the out-peers and
// averaging with what the in-peers sent (the SGP code's gossiper.py).
enum class GossipMixing { symmetric, directed };

// What the gossip algorithms share: no gradient synchronization (each rank steps on its own
// gradient), mixing of parameters after the step, and evaluation of the consensus average.
class Gossip : public Algorithm {
 public:
  Gossip(comm::Communicator& comm, std::unique_ptr<Topology> topology)
      : comm_(comm), topology_(std::move(topology)) {}

  void synchronize_gradients(std::span<float>) override {}
  std::span<const float> model_for_evaluation(std::span<const float> params) override {
    return consensus_.compute(params, comm_);
  }
  std::optional<double> consensus_distance() const override { return consensus_.distance(); }
  AlgorithmStats stats() const override { return stats_; }
  // The iteration count, which picks each iteration's peers on time-varying topologies.
  void save_state(StateWriter& out) override { out.write(iteration_); }
  void load_state(StateReader& in) override { iteration_ = in.read<std::uint64_t>(); }

 protected:
  // exchange_with_peers on the training thread: the whole round is time training waits, and
  // counts as communication too.
  void mix_round(std::span<const float> message, const std::vector<int>& out,
                 const std::vector<int>& in, std::vector<float>& received);

  comm::Communicator& comm_;
  std::unique_ptr<Topology> topology_;
  ConsensusAverage consensus_;
  AlgorithmStats stats_;
  std::uint64_t iteration_ = 0;
};

}  // namespace commsgd::algorithms
