#include "algorithms/sparse/aggregation.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "algorithms/sparse/allgather_aggregation.hpp"
#include "algorithms/sparse/gtopk_aggregation.hpp"

namespace commsgd::algorithms {

ExtensionTable<AggregationRow>& aggregation_table() {
  static ExtensionTable<AggregationRow> table(
      "--aggregation", "aggregation",
      {{"allgather", "the sum of every rank's selection (Top-k S-SGD)",
        [](const AlgorithmConfig&, comm::Communicator& comm) -> std::unique_ptr<Aggregation> {
          return std::make_unique<AllgatherAggregation>(comm);
        },
        Traffic::allgathered_sets},
       {"gtopk", "the global top-k of the selections, by recursive doubling (gTop-k S-SGD)",
        [](const AlgorithmConfig&, comm::Communicator& comm) -> std::unique_ptr<Aggregation> {
          return std::make_unique<GtopkAggregation>(comm);
        },
        Traffic::gtopk_rounds}});
  return table;
}

std::unique_ptr<Aggregation> make_aggregation(const AlgorithmConfig& config,
                                              comm::Communicator& comm) {
  return aggregation_table().find(config.aggregation).make(config, comm);
}

void pack(const kernels::SparseSet& set, std::vector<std::byte>& bytes) {
  const std::size_t n = set.size();
  bytes.resize(8 * n);
  std::memcpy(bytes.data(), set.values.data(), 4 * n);
  std::memcpy(bytes.data() + 4 * n, set.indices.data(), 4 * n);
}

std::array<std::span<const std::byte>, 2> wire_parts(const kernels::SparseSet& set) {
  return {std::as_bytes(std::span(set.values)), std::as_bytes(std::span(set.indices))};
}

kernels::SparseView entries_of(std::span<const std::byte> bytes) {
  if (bytes.size() % 8 != 0) throw std::runtime_error("sparse message of a partial entry");
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(float) != 0) {
    throw std::runtime_error("sparse message not aligned for its entries");
  }
  const std::size_t n = bytes.size() / 8;
  // Received bytes hold the floats and indices the sender packed (C++20's implicit object
  // creation: the receive wrote them into storage from operator new).
  return {{reinterpret_cast<const float*>(bytes.data()), n},
          {reinterpret_cast<const std::uint32_t*>(bytes.data() + 4 * n), n}};
}

void unpack(std::span<const std::byte> bytes, kernels::SparseSet& set) {
  const kernels::SparseView entries = entries_of(bytes);
  set.values.assign(entries.values.begin(), entries.values.end());
  set.indices.assign(entries.indices.begin(), entries.indices.end());
}

}  // namespace commsgd::algorithms
