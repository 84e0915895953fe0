#include "algorithms/compressed/code_allgather.hpp"

#include <cstring>
#include <stdexcept>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {

CodeAllgather::CodeAllgather(comm::Communicator& comm, std::size_t code_words, std::size_t scales)
    : comm_(comm),
      code_words_(code_words),
      scales_(scales),
      block_words_(code_words + (scales + 1) / 2),
      mine_(block_words_, 0),
      all_(block_words_ * static_cast<std::size_t>(comm.size())) {}

std::span<std::uint64_t> CodeAllgather::my_code() {
  return std::span(mine_).first(code_words_);
}

void CodeAllgather::set_my_scales(std::span<const float> scales) {
  if (scales.size() != scales_) throw std::logic_error("CodeAllgather: wrong number of scales");
  std::memcpy(mine_.data() + code_words_, scales.data(), scales.size_bytes());
}

void CodeAllgather::exchange(AlgorithmStats& stats, bool barrier_first) {
  Stopwatch watch;
  if (barrier_first) {
    comm_.barrier();
    stats.wait_seconds += watch.restart();
  }
  const TrafficMeter traffic(comm_);
  comm_.allgather(mine_.data(), all_.data(), bytes_per_rank());
  traffic.add_to(stats.bytes_sent, stats.bytes_received);
  stats.communicate_seconds += watch.seconds();
}

std::span<const std::uint64_t> CodeAllgather::block(int rank) const {
  return std::span(all_).subspan(static_cast<std::size_t>(rank) * block_words_, block_words_);
}

std::span<const std::uint64_t> CodeAllgather::code_of(int rank) const {
  return block(rank).first(code_words_);
}

void CodeAllgather::copy_scales_of(int rank, std::span<float> scales) const {
  if (scales.size() != scales_) throw std::logic_error("CodeAllgather: wrong number of scales");
  std::memcpy(scales.data(), block(rank).data() + code_words_, scales.size_bytes());
}

}  // namespace commsgd::algorithms
