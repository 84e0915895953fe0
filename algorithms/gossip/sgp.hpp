#pragma once

#include <vector>

#include "algorithms/gossip/gossip.hpp"
#include "algorithms/gossip/push_sum.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// Stochastic Gradient Push (Assran et al., ICML 2019), synchronous. Around each local step:
//   x = w·z; the optimizer steps on x                (before_step: PushSum::to_numerator)
//   keep (x, w)/(n+1), and send the same share to the n out-peers of iteration t
//   add what the in-peers sent; the model becomes z = x/w
// x is the parameters themselves, the message is x, and what arrives is added a slice at a time:
// SGP holds one slice per in-peer (gossip.hpp) and the weight, no model-sized buffer.
class Sgp final : public Gossip {
 public:
  using Gossip::Gossip;
  bool works_in(kernels::Memory) const override { return true; }
  void before_step(Buffer<float> params) override;
  void after_step(Buffer<float> x) override;
  float weight() const { return push_sum_.weight(); }
  // Also the push-sum weight: the parameters are z, and x is w·z.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 private:
  PushSum push_sum_;
  kernels::ops::Storage<float> heads_;  // where x is: the weight sent, then those received
  std::vector<float> weights_in_;       // the weights of the round's messages, one per in-peer
};

}  // namespace commsgd::algorithms
