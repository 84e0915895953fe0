#include "algorithms/gossip/sgp.hpp"

namespace commsgd::algorithms {

void Sgp::before_step(Buffer<float> params) {
  push_sum_.to_numerator(params);
}

void Sgp::after_step(Buffer<float> x) {
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in = topology_->in_peers(comm_.rank(), iteration_);
  // The share kept is the share sent: x itself goes out, and each slice of it takes what the
  // in-peers sent once the slice has left. The weight travels with the first slice, in x's place.
  const float weight_share = push_sum_.split(x, out.size());
  heads_.resize(1 + in.size(), x.place());
  const Buffer<float> heads = heads_.buffer();
  kernels::ops::copy_from_host(std::span(&weight_share, 1), heads.subspan(0, 1));
  mix_round(x, out, in,
            [&](std::size_t offset, std::size_t count, Buffer<const float> received) {
              kernels::ops::add_blocks(x.subspan(offset, count), received, 1.0f);
            },
            {heads.subspan(0, 1), heads.subspan(1, in.size())});
  weights_in_.resize(in.size());
  kernels::ops::copy_to_host(heads.subspan(1, in.size()), weights_in_);
  for (const float w : weights_in_) push_sum_.absorb_weight(w);
  push_sum_.to_model(x);
  stats_.entries_offered += x.size();
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
