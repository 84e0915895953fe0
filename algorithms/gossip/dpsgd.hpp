#pragma once

#include <vector>

#include "algorithms/gossip/gossip.hpp"

namespace commsgd::algorithms {

// D-PSGD (Lian et al., NeurIPS 2017). After each local step, average with the neighbours of
// iteration t on a symmetric topology: x ← (x + Σ_{j∈N_t} x_j) / (|N_t| + 1). Every rank of the
// topologies allowed here has the same degree, so the mixing is doubly stochastic and the mean of
// x over ranks does not move.
class Dpsgd final : public Gossip {
 public:
  Dpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology);
  void after_step(std::span<float> params) override;

 private:
  std::vector<float> received_;
};

}  // namespace commsgd::algorithms
