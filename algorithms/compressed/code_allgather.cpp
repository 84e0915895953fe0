#include "algorithms/compressed/code_allgather.hpp"

#include <type_traits>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {
namespace {

// The scales of the block at `words`: floats in its words after the code, which they fill
// whole (a float's alignment divides a word's).
template <class Word>
auto scales_in(Buffer<Word> words, std::size_t code_words, std::size_t scales) {
  using Float = std::conditional_t<std::is_const_v<Word>, const float, float>;
  return Buffer<Float>(reinterpret_cast<Float*>(words.data() + code_words), scales, words.place());
}

}  // namespace

CodeAllgather::CodeAllgather(comm::Communicator& comm, std::size_t code_words, std::size_t scales)
    : comm_(comm),
      code_words_(code_words),
      scales_(scales),
      block_words_(code_words + (scales + 1) / 2) {
  place(kernels::kHost);
}

void CodeAllgather::place(kernels::Place place) {
  if (place == mine_.buffer().place() && mine_.size() == block_words_) return;
  mine_.resize(block_words_, place);
  all_.resize(block_words_ * static_cast<std::size_t>(comm_.size()), place);
  // The scales' words, the last one's second half included where the scales are odd: what this
  // rank sends is set, every byte.
  kernels::ops::fill_zero(scales_in(mine_.buffer(), code_words_, 2 * (block_words_ - code_words_)));
}

Buffer<std::uint64_t> CodeAllgather::my_code() {
  return mine_.buffer().subspan(0, code_words_);
}

Buffer<float> CodeAllgather::my_scales() {
  return scales_in(mine_.buffer(), code_words_, scales_);
}

void CodeAllgather::exchange(AlgorithmStats& stats, bool barrier_first) {
  const kernels::Place place = mine_.buffer().place();
  Stopwatch watch;
  if (barrier_first) {
    comm_.barrier();
    stats.wait_seconds += watch.restart();
  }
  const TrafficMeter traffic(comm_);
  comm_.allgather(mine_.buffer().data(), all_.buffer().data(), bytes_per_rank(), place);
  comm_.synchronize(place);  // on a device, timed once done, not once enqueued
  traffic.add_to(stats.bytes_sent, stats.bytes_received);
  stats.communicate_seconds += watch.seconds();
}

Buffer<const std::uint64_t> CodeAllgather::code_of(int rank) const {
  return all_.buffer().subspan(static_cast<std::size_t>(rank) * block_words_, code_words_);
}

Buffer<const float> CodeAllgather::scales_of(int rank) const {
  return scales_in(
      all_.buffer().subspan(static_cast<std::size_t>(rank) * block_words_, block_words_),
      code_words_, scales_);
}

}  // namespace commsgd::algorithms
