#include "algorithms/gossip/sgp.hpp"

namespace commsgd::algorithms {

void Sgp::before_step(Buffer<float> params) {
  push_sum_.to_numerator(params.host("sgp"));
}

void Sgp::after_step(Buffer<float> buffer) {
  const std::span<float> x = buffer.host("sgp");
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in = topology_->in_peers(comm_.rank(), iteration_);
  // The share kept is the share sent: x itself goes out, and each slice of it takes what the
  // in-peers sent once the slice has left. The weight travels with the first slice.
  const float weight_share = push_sum_.split(x, out.size());
  weights_in_.resize(in.size());
  mix_round(x, out, in,
            [&](std::size_t offset, std::size_t count, std::span<const float> received) {
              float* __restrict mine = x.data() + offset;
              for (std::size_t i = 0; i < in.size(); ++i) {
                const float* __restrict theirs = received.data() + i * count;
                for (std::size_t j = 0; j < count; ++j) mine[j] += theirs[j];
              }
            },
            {std::span(&weight_share, 1), weights_in_});
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
