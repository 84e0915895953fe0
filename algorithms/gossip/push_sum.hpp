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
// A message is [w, x_0, ..., x_{d−1}] in float32: d + 1 floats. The state is held in that same
// layout, so that the share a rank keeps can itself be sent (split_in_place): no copy of the
// model for the message.
class PushSum {
 public:
  // x += (what the optimizer did to z): the rank's step is applied to the numerator. The first
  // call starts push-sum at x = params, w = 1.
  void apply_step(std::span<const float> params);
  // Keeps 1/(out_degree + 1) of (x, w) and returns it, which is also the share to send to each
  // out-peer: valid, and to be left unchanged, until the state next changes.
  std::span<const float> split_in_place(std::size_t out_degree);
  // The same, and writes the share into `message`, for a message in flight while the state
  // changes (OSGP).
  void split(std::size_t out_degree, std::span<float> message);
  // (x, w) += a message (or a sum of messages).
  void absorb(std::span<const float> message);
  // params = x / w.
  void debias(std::span<float> params) const;

  void save(StateWriter& out) const;
  void load(StateReader& in);

  float weight() const { return started() ? state_[0] : 1.0f; }
  bool started() const { return !state_.empty(); }
  std::size_t message_size() const { return started() ? state_.size() : 1; }

 private:
  std::vector<float> state_;  // [w, x_0, ..., x_{d−1}]; empty before the first step
};

}  // namespace commsgd::algorithms
