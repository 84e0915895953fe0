#include "algorithms/gossip/dpsgd.hpp"

#include <stdexcept>

namespace commsgd::algorithms {

Dpsgd::Dpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology, GossipMixing mixing,
             bool barrier_before_rounds)
    : Gossip(comm, std::move(topology), barrier_before_rounds), mixing_(mixing) {
  if (mixing_ == GossipMixing::symmetric && !topology_->symmetric()) {
    throw std::invalid_argument(
        "--algo dpsgd needs a symmetric --topology (bipartite-exponential, "
        "bipartite-exponential-pairs, ring or complete), or --gossip-mixing directed");
  }
}

void Dpsgd::after_step(Buffer<float> params) {
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in =
      mixing_ == GossipMixing::symmetric ? out : topology_->in_peers(comm_.rank(), iteration_);
  const std::size_t d = params.size();
  const float share = 1.0f / static_cast<float>(in.size() + 1);
  mix_round(params, out, in,
            [&](std::size_t offset, std::size_t count, Buffer<const float> received) {
              kernels::ops::add_blocks(params.subspan(offset, count), received, share);
            });
  stats_.entries_offered += d;
  ++iteration_;
}

}  // namespace commsgd::algorithms
