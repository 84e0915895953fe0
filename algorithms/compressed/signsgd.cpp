#include "algorithms/compressed/signsgd.hpp"

#include <algorithm>

#include "algorithms/stopwatch.hpp"
#include "kernels/sign_bits.hpp"

namespace commsgd::algorithms {

SignSgd::SignSgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm), barrier_(config.barrier_before_communicate) {}

void SignSgd::synchronize_gradients(Buffer<float> grads) {
  const std::span<float> g = grads.host("signsgd");
  if (!exchange_) exchange_.emplace(comm_, kernels::sign_words(g.size()), 0);
  stats_.entries_sent += g.size();
  stats_.entries_offered += g.size();

  const Stopwatch watch;
  kernels::pack_signs(g, exchange_->my_code());  // s_r = sign(g_r)
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  std::fill(g.begin(), g.end(), 0.0f);  // g = sign(Σ_r s_r)
  for (int r = 0; r < comm_.size(); ++r) kernels::add_signs(exchange_->code_of(r), 0, 1.0f, g);
  kernels::sign_in_place(g);
}

}  // namespace commsgd::algorithms
