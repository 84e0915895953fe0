#pragma once

#include <vector>

#include "algorithms/gossip/gossip.hpp"
#include "algorithms/gossip/push_sum.hpp"

namespace commsgd::algorithms {

// Stochastic Gradient Push (Assran et al., ICML 2019), synchronous. After each local step:
//   x ← x − lr·update                      (PushSum::apply_step)
//   send (x, w)/(n+1) to the n out-peers of iteration t, keep the same share
//   add what the in-peers sent; the model becomes z = x/w
class Sgp final : public Gossip {
 public:
  using Gossip::Gossip;
  void after_step(std::span<float> params) override;
  float weight() const { return push_sum_.weight(); }
  // Also the push-sum numerator and weight: the parameters are only their quotient.
  void save_state(StateWriter& out) override;
  void load_state(StateReader& in) override;

 private:
  PushSum push_sum_;
  std::vector<float> received_;
};

}  // namespace commsgd::algorithms
