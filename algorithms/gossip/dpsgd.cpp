#include "algorithms/gossip/dpsgd.hpp"

#include <stdexcept>

namespace commsgd::algorithms {

Dpsgd::Dpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing)
    : Gossip(comm, std::move(topology)), mixing_(mixing) {
  if (mixing_ == GossipMixing::symmetric && !topology_->symmetric()) {
    throw std::invalid_argument(
        "--algo dpsgd needs a symmetric --topology (bipartite-exponential, ring or complete), "
        "or --gossip-mixing directed");
  }
}

void Dpsgd::after_step(std::span<float> params) {
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in =
      mixing_ == GossipMixing::symmetric ? out : topology_->in_peers(comm_.rank(), iteration_);
  const std::size_t d = params.size();
  mix_round(params, out, in, received_);
  const float share = 1.0f / static_cast<float>(in.size() + 1);
  for (std::size_t j = 0; j < d; ++j) {
    float sum = params[j];
    for (std::size_t i = 0; i < in.size(); ++i) sum += received_[i * d + j];
    params[j] = sum * share;
  }
  stats_.entries_offered += d;
  ++iteration_;
}

}  // namespace commsgd::algorithms
