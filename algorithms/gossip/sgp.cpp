#include "algorithms/gossip/sgp.hpp"

namespace commsgd::algorithms {

void Sgp::after_step(std::span<float> params) {
  push_sum_.apply_step(params);
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in = topology_->in_peers(comm_.rank(), iteration_);
  // The share kept is the share sent: the state itself goes out, unchanged until every
  // message of the round has arrived.
  const std::span<const float> message = push_sum_.split_in_place(out.size());
  const std::size_t n = message.size();
  mix_round(message, out, in, received_);
  for (std::size_t i = 0; i < in.size(); ++i) {
    push_sum_.absorb(std::span(received_).subspan(i * n, n));
  }
  push_sum_.debias(params);
  stats_.entries_offered += params.size();
  ++iteration_;
}

void Sgp::save_state(StateWriter& out) {
  Gossip::save_state(out);
  push_sum_.save(out);
}

void Sgp::load_state(StateReader& in) {
  Gossip::load_state(in);
  push_sum_.load(in);
}

}  // namespace commsgd::algorithms
