#include "algorithms/sparse/allgather_aggregation.hpp"

namespace commsgd::algorithms {

void AllgatherAggregation::exchange(const kernels::SparseSet& local, std::size_t,
                                    std::vector<std::uint8_t>& applied) {
  // Selections differ in size (gaussian, dgc), so the sizes travel first.
  const std::uint64_t mine = local.size();
  counts_.resize(static_cast<std::size_t>(comm_.size()));
  comm_.allgather(&mine, counts_.data(), sizeof(mine));
  bytes_per_rank_.resize(counts_.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts_.size(); ++r) {
    bytes_per_rank_[r] = 8 * counts_[r];
    total += bytes_per_rank_[r];
  }
  pack(local, send_);
  recv_.resize(total);
  comm_.allgatherv(send_.data(), recv_.data(), bytes_per_rank_);
  applied.assign(local.size(), 1);
}

void AllgatherAggregation::write_update(kernels::Buffer<float> update) {
  // Sum in rank order on every rank, so every rank computes the same floats.
  kernels::ops::fill_zero(update);
  std::size_t offset = 0;
  for (const std::size_t bytes : bytes_per_rank_) {
    unpack(std::span(recv_).subspan(offset, bytes), received_);
    kernels::ops::scatter_add(received_, update, staging_);
    offset += bytes;
  }
}

}  // namespace commsgd::algorithms
