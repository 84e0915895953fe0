#include "algorithms/compressed/ef_signsgd.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "kernels/sign_bits.hpp"
#include "kernels/vector_ops.hpp"

namespace commsgd::algorithms {

EfSignSgd::EfSignSgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm),
      barrier_(config.barrier_before_communicate),
      norm_study_(comm, config.norm_study_every, config.seed) {}

void EfSignSgd::set_layout(std::span<const ParameterLayout> layout) {
  const std::size_t entries = layout_entries(layout, "ef-signsgd");
  layout_.assign(layout.begin(), layout.end());
  error_.assign(entries, 0.0f);
  scales_.assign(layout.size(), 0.0f);
  received_scales_.assign(layout.size(), 0.0f);
  exchange_.emplace(comm_, kernels::sign_words(entries), layout.size());
}

void EfSignSgd::synchronize_gradients(Buffer<float> grads) {
  const std::span<float> g = grads.host("ef-signsgd");
  if (!exchange_) throw std::logic_error("ef-signsgd: no parameter layout (set_layout)");
  if (g.size() != error_.size()) {
    throw std::logic_error("ef-signsgd: the gradient is not the size of the layout");
  }
  stats_.entries_sent += g.size();
  stats_.entries_offered += g.size();

  const bool study = norm_study_.due(step_);
  if (study) norm_study_.take_dense(g, stats_, error_);  // x: the mean of p = g + e

  const Stopwatch watch;
  const std::span<float> p(error_);
  kernels::add_blocks(p, g, 1.0f);  // p = g + e
  kernels::pack_signs(p, exchange_->my_code());
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const std::span<float> p_t = p.subspan(layout_[t].offset, layout_[t].entries());
    scales_[t] = p_t.empty() ? 0.0f : static_cast<float>(kernels::l1_norm(p_t) / p_t.size());
    // e = p − Δ: p_t less its scaled sign, where error_ holds p.
    kernels::add_signs(exchange_->my_code(), layout_[t].offset, -scales_[t], p_t);
  }
  exchange_->set_my_scales(scales_);
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  std::fill(g.begin(), g.end(), 0.0f);  // g = (1/P) Σ_r Δ_r
  const float share = 1.0f / static_cast<float>(comm_.size());
  for (int r = 0; r < comm_.size(); ++r) {
    exchange_->copy_scales_of(r, received_scales_);
    for (std::size_t t = 0; t < layout_.size(); ++t) {
      kernels::add_signs(exchange_->code_of(r), layout_[t].offset, received_scales_[t] * share,
                         g.subspan(layout_[t].offset, layout_[t].entries()));
    }
  }
  if (study) norm_study_.study_at_equal_bytes(g, exchange_->bytes_per_rank(), step_, stats_);
  ++step_;
}

void EfSignSgd::save_state(StateWriter& out) {
  out.write(step_);
  out.write(std::span<const float>(error_));
}

void EfSignSgd::load_state(StateReader& in) {
  step_ = in.read<std::uint64_t>();
  in.read(std::span<float>(error_));
}

}  // namespace commsgd::algorithms
