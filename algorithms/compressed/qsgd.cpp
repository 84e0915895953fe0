#include "algorithms/compressed/qsgd.hpp"

#include <algorithm>
#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "kernels/qsgd.hpp"

namespace commsgd::algorithms {

Qsgd::Qsgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm),
      levels_(static_cast<unsigned>(config.qsgd_levels)),
      bucket_(static_cast<std::size_t>(config.qsgd_bucket)),
      seed_(config.seed),
      barrier_(config.barrier_before_communicate),
      norm_study_(comm, config.norm_study_every, config.seed) {
  if (config.qsgd_levels < 1) throw std::invalid_argument("--qsgd-levels: must be > 0");
  if (config.qsgd_bucket < 1) throw std::invalid_argument("--qsgd-bucket: must be > 0");
}

void Qsgd::synchronize_gradients(Buffer<float> grads) {
  const std::span<float> g = grads.host("qsgd");
  if (g.empty()) throw std::logic_error("qsgd: an empty gradient");
  const std::size_t buckets = (g.size() + bucket_ - 1) / bucket_;
  if (!exchange_) {
    bucket_words_ = kernels::qsgd_words(bucket_, levels_);
    const std::size_t last = g.size() - (buckets - 1) * bucket_;  // the last bucket's entries
    exchange_.emplace(comm_, (buckets - 1) * bucket_words_ + kernels::qsgd_words(last, levels_),
                      buckets);
    norms_.assign(buckets, 0.0f);
    their_norms_.assign(buckets, 0.0f);
  }
  stats_.entries_sent += g.size();
  stats_.entries_offered += g.size();
  // Bucket b: its entries of g, and its words of a rank's code.
  const auto entries = [&](std::size_t b, std::span<float> of) {
    return of.subspan(b * bucket_, std::min(bucket_, of.size() - b * bucket_));
  };
  const auto words = [&](std::size_t b, auto code) {
    return code.subspan(b * bucket_words_,
                        kernels::qsgd_words(std::min(bucket_, g.size() - b * bucket_), levels_));
  };

  const auto iteration = static_cast<std::uint64_t>(step_);
  const bool study = norm_study_.due(iteration);
  if (study) norm_study_.take_dense(g, stats_);

  const Stopwatch watch;
  const std::uint64_t key = kernels::qsgd_key(
      seed_, static_cast<std::uint64_t>(step_) * static_cast<std::uint64_t>(comm_.size()) +
                 static_cast<std::uint64_t>(comm_.rank()));
  for (std::size_t b = 0; b < buckets; ++b) {
    norms_[b] = kernels::qsgd_encode(entries(b, g), levels_, key, b * bucket_,
                                     words(b, exchange_->my_code()));
  }
  exchange_->set_my_scales(norms_);
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  std::fill(g.begin(), g.end(), 0.0f);  // g = (1/P) Σ_r Q(g_r)
  const float share = 1.0f / static_cast<float>(comm_.size());
  for (int r = 0; r < comm_.size(); ++r) {
    exchange_->copy_scales_of(r, their_norms_);
    for (std::size_t b = 0; b < buckets; ++b) {
      kernels::qsgd_decode_add(words(b, exchange_->code_of(r)), levels_, their_norms_[b], share,
                               entries(b, g));
    }
  }
  if (study) norm_study_.study_at_equal_bytes(g, exchange_->bytes_per_rank(), iteration, stats_);
  ++step_;
}

void Qsgd::save_state(StateWriter& out) {
  out.write(step_);
}

void Qsgd::load_state(StateReader& in) {
  step_ = in.read<std::int64_t>();
}

}  // namespace commsgd::algorithms
