#pragma once

#include <span>

#include "algorithms/state.hpp"
#include "kernels/buffer.hpp"

namespace commsgd::algorithms {

// Push-sum (Kempe et al.; SGP, Assran et al. 2019): each rank holds a numerator x and a weight w
// (w₀ = 1), and the model it trains and evaluates is the de-biased z = x / w. Mixing keeps
// 1/(n+1) of (x, w) and sends the same share along each of the n out-edges, so Σ_r w_r plus the
// weight in flight stays P, and x / w de-biases exactly whatever the graph's in-degrees.
//
// As in the SGP code, x lives in the parameters themselves: they hold x from before the
// optimizer's step (which therefore steps on x, weight decay included, as the code's optimizer
// does) until the mixing is over, and z the rest of the time. Only w is kept here, so push-sum
// holds no model-sized state of its own. On a regular graph w stays 1, and x is z bit for bit.
class PushSum {
 public:
  // params: z → x = w·z.
  void to_numerator(kernels::Buffer<float> params) const;
  // Keeps 1/(out_degree + 1) of (x, w), scaling x in place: x is then also the share each
  // out-peer is sent. Returns the weight of that share, which is the weight kept.
  float split(kernels::Buffer<float> x, std::size_t out_degree);
  // w += the weight that arrived with a message.
  void absorb_weight(float arrived) { w_ += arrived; }
  // params: x → z = x / weight(pending). Without pending, x / w; with the weights of messages
  // whose x_m have been added to params but not yet absorbed, the model they will make once they
  // are: (x + Σ x_m) / (w + Σ w_m).
  void to_model(kernels::Buffer<float> params, std::span<const float> pending = {}) const;

  // w + Σ pending, added in order.
  float weight(std::span<const float> pending = {}) const;
  void save(StateWriter& out) const { out.write(w_); }
  void load(StateReader& in) { w_ = in.read<float>(); }

 private:
  float w_ = 1.0f;
};

}  // namespace commsgd::algorithms
