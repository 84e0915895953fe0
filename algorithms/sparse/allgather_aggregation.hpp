#pragma once

#include "algorithms/sparse/aggregation.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// Top-k S-SGD's aggregation: every rank allgathers every selection (values and indices) and
// sums them; everything selected is applied. Cost α·log P + (P−1)·8k·β.
class AllgatherAggregation final : public Aggregation {
 public:
  explicit AllgatherAggregation(comm::Communicator& comm) : comm_(comm) {}
  void exchange(const kernels::SparseSet& local, std::size_t k,
                std::vector<std::uint8_t>& applied) override;
  void write_update(kernels::Buffer<float> update) override;

 private:
  comm::Communicator& comm_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::size_t> bytes_per_rank_;
  std::vector<std::byte> send_, recv_;
  kernels::SparseSet received_;
  kernels::ops::SparseStaging staging_;
};

}  // namespace commsgd::algorithms
