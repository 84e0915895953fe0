#pragma once

#include "algorithms/gossip/gossip.hpp"

namespace commsgd::algorithms {

// D-PSGD. After each local step, rank r averages its parameters with those of iteration t's
// peers, in one of two ways (--gossip-mixing):
//   symmetric (Lian et al., NeurIPS 2017): with the neighbours N_t of a symmetric topology,
//     x ← (x + Σ_{j∈N_t} x_j) / (|N_t| + 1), sending x to the same neighbours;
//   directed (the SGP code's D-PSGD, gossiper.py PushPull): sending x to the out-peers and
//     averaging with what the in-peers sent, x ← (x + Σ_{j∈in_t} x_j) / (|in_t| + 1).
// On the topologies allowed here every rank has as many in-peers as out-peers, the same number
// for all, so the mixing is doubly stochastic and the mean of x over ranks does not move.
class Dpsgd final : public Gossip {
 public:
  Dpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing,
        bool barrier_before_rounds = false);
  bool works_in(kernels::Memory) const override { return true; }
  void after_step(Buffer<float> params) override;

 private:
  const GossipMixing mixing_;
};

}  // namespace commsgd::algorithms
