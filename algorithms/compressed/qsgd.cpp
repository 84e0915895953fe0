#include "algorithms/compressed/qsgd.hpp"

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

bool Qsgd::works_in(kernels::Memory memory) const {
  return memory == kernels::Memory::host || !norm_study_.enabled();
}

void Qsgd::synchronize_gradients(Buffer<float> g) {
  if (g.empty()) throw std::logic_error("qsgd: an empty gradient");
  const std::size_t buckets = (g.size() + bucket_ - 1) / bucket_;
  if (!exchange_) {
    exchange_.emplace(comm_, kernels::qsgd_code_words(g.size(), bucket_, levels_), buckets);
  }
  exchange_->place(g.place());
  stats_.entries_sent += g.size();
  stats_.entries_offered += g.size();

  const auto iteration = static_cast<std::uint64_t>(step_);
  const bool study = norm_study_.due(iteration);
  const char* const study_needs = "--norm-study-every";
  if (study) norm_study_.take_dense(g.host(study_needs), stats_);

  const Stopwatch watch;
  const std::uint64_t key = kernels::qsgd_key(
      seed_, static_cast<std::uint64_t>(step_) * static_cast<std::uint64_t>(comm_.size()) +
                 static_cast<std::uint64_t>(comm_.rank()));
  kernels::ops::qsgd_encode_buckets(g, bucket_, levels_, key, exchange_->my_code(),
                                    exchange_->my_scales());
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  kernels::ops::fill_zero(g);  // g = (1/P) Σ_r Q(g_r)
  const float share = 1.0f / static_cast<float>(comm_.size());
  for (int r = 0; r < comm_.size(); ++r) {
    kernels::ops::qsgd_decode_add_buckets(exchange_->code_of(r), exchange_->scales_of(r), bucket_,
                                          levels_, share, g);
  }
  if (study) {
    norm_study_.study_at_equal_bytes(g.host(study_needs), exchange_->bytes_per_rank(), iteration,
                                     stats_);
  }
  ++step_;
}

void Qsgd::save_state(StateWriter& out) {
  out.write(step_);
}

void Qsgd::load_state(StateReader& in) {
  step_ = in.read<std::int64_t>();
}

}  // namespace commsgd::algorithms
