#pragma once

#include <span>
#include <vector>

#include "algorithms/state.hpp"

namespace commsgd::algorithms {

// The state of push-sum (Kempe et al.; SGP, Assran et al. 2019): a numerator x and a weight w
// (w₀ = 1). The model the rank trains and evaluates is the de-biased z = x / w. Mixing sends
// the same share of (x, w) along every out-edge and keeps one, so Σ_r w_r plus the weight in
// flight stays P and x/w de-biases exactly, whatever the graph's in-degrees.
//
// A message is [w, x_0, ..., x_{d−1}] in float32: d + 1 floats.
class PushSum {
 public:
  // x += (what the optimizer did to z): the rank's step is applied to the numerator. The first
  // call starts push-sum at x = params, w = 1.
  void apply_step(std::span<const float> params);
  // Keeps 1/(out_degree + 1) of (x, w) and writes the same share into `message`.
  void split(std::size_t out_degree, std::span<float> message);
  // (x, w) += a message (or a sum of messages).
  void absorb(std::span<const float> message);
  // params = x / w.
  void debias(std::span<float> params) const;

  void save(StateWriter& out) const;
  void load(StateReader& in);

  float weight() const { return w_; }
  bool started() const { return !x_.empty(); }
  std::size_t message_size() const { return x_.size() + 1; }

 private:
  std::vector<float> x_;
  float w_ = 1.0f;
};

}  // namespace commsgd::algorithms
