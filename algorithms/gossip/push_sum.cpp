#include "algorithms/gossip/push_sum.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

void PushSum::apply_step(std::span<const float> params) {
  if (state_.empty()) {
    state_.resize(params.size() + 1);
    state_[0] = 1.0f;
    std::copy(params.begin(), params.end(), state_.begin() + 1);
    return;
  }
  // z was x/w when the step began, so x/w + Δ = params gives x + Δ = params + x·(1 − 1/w).
  const float keep = 1.0f - 1.0f / state_[0];
  float* __restrict x = state_.data() + 1;
  const float* __restrict p = params.data();
  for (std::size_t i = 0; i < params.size(); ++i) x[i] = p[i] + x[i] * keep;
}

std::span<const float> PushSum::split_in_place(std::size_t out_degree) {
  kernels::scale(state_, 1.0f / static_cast<float>(out_degree + 1));
  return state_;
}

void PushSum::split(std::size_t out_degree, std::span<float> message) {
  if (message.size() != message_size()) throw std::invalid_argument("push-sum message size");
  const std::span<const float> kept = split_in_place(out_degree);
  std::copy(kept.begin(), kept.end(), message.begin());
}

void PushSum::absorb(std::span<const float> message) {
  if (message.size() != message_size()) throw std::invalid_argument("push-sum message size");
  float* __restrict state = state_.data();
  const float* __restrict in = message.data();
  for (std::size_t i = 0; i < state_.size(); ++i) state[i] += in[i];
}

void PushSum::debias(std::span<float> params) const {
  const float inverse = 1.0f / state_[0];
  const float* __restrict x = state_.data() + 1;
  float* __restrict p = params.data();
  for (std::size_t i = 0; i < params.size(); ++i) p[i] = x[i] * inverse;
}

void PushSum::save(StateWriter& out) const {
  out.write(weight());
  out.write(started() ? std::span<const float>(state_).subspan(1) : std::span<const float>());
}

void PushSum::load(StateReader& in) {
  const float w = in.read<float>();
  std::vector<float> x;
  in.read(x);
  state_.clear();
  if (x.empty()) return;
  state_.reserve(x.size() + 1);
  state_.push_back(w);
  state_.insert(state_.end(), x.begin(), x.end());
}

}  // namespace commsgd::algorithms
