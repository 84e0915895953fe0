#include "algorithms/gossip/push_sum.hpp"

#include <stdexcept>

namespace commsgd::algorithms {

void PushSum::apply_step(std::span<const float> params) {
  if (x_.empty()) {
    x_.assign(params.begin(), params.end());
    w_ = 1.0f;
    return;
  }
  // z was x/w when the step began, so x/w + Δ = params gives x + Δ = params + x·(1 − 1/w).
  const float keep = 1.0f - 1.0f / w_;
  float* __restrict x = x_.data();
  const float* __restrict p = params.data();
  for (std::size_t i = 0; i < x_.size(); ++i) x[i] = p[i] + x[i] * keep;
}

void PushSum::split(std::size_t out_degree, std::span<float> message) {
  if (message.size() != message_size()) throw std::invalid_argument("push-sum message size");
  const float share = 1.0f / static_cast<float>(out_degree + 1);
  w_ *= share;
  message[0] = w_;
  float* __restrict x = x_.data();
  float* __restrict out = message.data() + 1;
  for (std::size_t i = 0; i < x_.size(); ++i) {
    x[i] *= share;
    out[i] = x[i];
  }
}

void PushSum::absorb(std::span<const float> message) {
  if (message.size() != message_size()) throw std::invalid_argument("push-sum message size");
  w_ += message[0];
  float* __restrict x = x_.data();
  const float* __restrict in = message.data() + 1;
  for (std::size_t i = 0; i < x_.size(); ++i) x[i] += in[i];
}

void PushSum::debias(std::span<float> params) const {
  const float inverse = 1.0f / w_;
  const float* __restrict x = x_.data();
  float* __restrict p = params.data();
  for (std::size_t i = 0; i < x_.size(); ++i) p[i] = x[i] * inverse;
}

void PushSum::save(StateWriter& out) const {
  out.write(w_);
  out.write(std::span<const float>(x_));
}

void PushSum::load(StateReader& in) {
  w_ = in.read<float>();
  in.read(x_);
}

}  // namespace commsgd::algorithms
