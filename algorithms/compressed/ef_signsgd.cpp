#include "algorithms/compressed/ef_signsgd.hpp"

#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "algorithms/stored_values.hpp"
#include "kernels/sign_bits.hpp"

namespace commsgd::algorithms {

EfSignSgd::EfSignSgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm),
      barrier_(config.barrier_before_communicate),
      norm_study_(comm, config.norm_study_every, config.seed) {}

void EfSignSgd::set_layout(std::span<const ParameterLayout> layout) {
  const std::size_t entries = layout_entries(layout, "ef-signsgd");
  layout_.assign(layout.begin(), layout.end());
  assign_zeros(error_, entries, kernels::kHost);
  scales_.assign(layout.size(), 0.0f);
  received_scales_.assign(layout.size(), 0.0f);
  exchange_.emplace(comm_, kernels::sign_words(entries), layout.size());
}

bool EfSignSgd::works_in(kernels::Memory memory) const {
  return memory == kernels::Memory::host || !norm_study_.enabled();
}

void EfSignSgd::synchronize_gradients(Buffer<float> g) {
  if (!exchange_) throw std::logic_error("ef-signsgd: no parameter layout (set_layout)");
  if (g.size() != error_.size()) {
    throw std::logic_error("ef-signsgd: the gradient is not the size of the layout");
  }
  kernels::ops::relocate(error_, g.place());
  exchange_->place(g.place());
  stats_.entries_sent += g.size();
  stats_.entries_offered += g.size();
  const Buffer<float> p = error_.buffer();

  const bool study = norm_study_.due(step_);
  const char* const study_needs = "--norm-study-every";
  if (study) norm_study_.take_dense(g.host(study_needs), stats_, p.host(study_needs));  // x: mean p

  const Stopwatch watch;
  kernels::ops::add(p, g);  // p = g + e
  kernels::ops::pack_signs(p, exchange_->my_code());
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const Buffer<float> p_t = p.subspan(layout_[t].offset, layout_[t].entries());
    scales_[t] = p_t.empty() ? 0.0f : static_cast<float>(kernels::ops::l1_norm(p_t) / p_t.size());
    // e = p − Δ: p_t less its scaled sign, where error_ holds p.
    kernels::ops::add_signs(exchange_->my_code(), layout_[t].offset, -scales_[t], p_t);
  }
  kernels::ops::copy_from_host(scales_, exchange_->my_scales());
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  kernels::ops::fill_zero(g);  // g = (1/P) Σ_r Δ_r
  const float share = 1.0f / static_cast<float>(comm_.size());
  for (int r = 0; r < comm_.size(); ++r) {
    kernels::ops::copy_to_host(exchange_->scales_of(r), received_scales_);
    for (std::size_t t = 0; t < layout_.size(); ++t) {
      kernels::ops::add_signs(exchange_->code_of(r), layout_[t].offset, received_scales_[t] * share,
                              g.subspan(layout_[t].offset, layout_[t].entries()));
    }
  }
  if (study) {
    norm_study_.study_at_equal_bytes(g.host(study_needs), exchange_->bytes_per_rank(), step_,
                                     stats_);
  }
  ++step_;
}

void EfSignSgd::save_state(StateWriter& out) {
  out.write(step_);
  write_values(out, error_.buffer());
}

// Into host memory: synchronize_gradients moves it where the gradient is.
void EfSignSgd::load_state(StateReader& in) {
  step_ = in.read<std::uint64_t>();
  read_values(in, error_, error_.size());
}

}  // namespace commsgd::algorithms
