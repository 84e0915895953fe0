#include "algorithms/compressed/signsgd.hpp"

#include "algorithms/stopwatch.hpp"
#include "kernels/sign_bits.hpp"

namespace commsgd::algorithms {

SignSgd::SignSgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm), barrier_(config.barrier_before_communicate) {}

void SignSgd::synchronize_gradients(Buffer<float> grads) {
  if (!exchange_) exchange_.emplace(comm_, kernels::sign_words(grads.size()), 0);
  exchange_->place(grads.place());
  stats_.entries_sent += grads.size();
  stats_.entries_offered += grads.size();

  const Stopwatch watch;
  kernels::ops::pack_signs(grads, exchange_->my_code());  // s_r = sign(g_r)
  stats_.select_seconds += watch.seconds();
  exchange_->exchange(stats_, barrier_);

  kernels::ops::fill_zero(grads);  // g = sign(Σ_r s_r)
  for (int r = 0; r < comm_.size(); ++r) {
    kernels::ops::add_signs(exchange_->code_of(r), 0, 1.0f, grads);
  }
  kernels::ops::sign_in_place(grads);
}

}  // namespace commsgd::algorithms
