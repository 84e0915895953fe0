#include "algorithms/sparse/aggregation.hpp"

#include <cstring>
#include <stdexcept>

#include "algorithms/sparse/allgather_aggregation.hpp"
#include "algorithms/sparse/gtopk_aggregation.hpp"

namespace commsgd::algorithms {

const std::vector<std::string>& aggregation_names() {
  static const std::vector<std::string> names = {"allgather", "gtopk"};
  return names;
}

std::unique_ptr<Aggregation> make_aggregation(const std::string& name, comm::Communicator& comm) {
  if (name == "allgather") return std::make_unique<AllgatherAggregation>(comm);
  if (name == "gtopk") return std::make_unique<GtopkAggregation>(comm);
  throw std::invalid_argument("--aggregation: unknown aggregation '" + name + "'");
}

void pack(const kernels::SparseSet& set, std::vector<std::byte>& bytes) {
  const std::size_t n = set.size();
  bytes.resize(8 * n);
  std::memcpy(bytes.data(), set.values.data(), 4 * n);
  std::memcpy(bytes.data() + 4 * n, set.indices.data(), 4 * n);
}

void unpack(std::span<const std::byte> bytes, kernels::SparseSet& set) {
  if (bytes.size() % 8 != 0) throw std::runtime_error("sparse message of a partial entry");
  const std::size_t n = bytes.size() / 8;
  set.values.resize(n);
  set.indices.resize(n);
  std::memcpy(set.values.data(), bytes.data(), 4 * n);
  std::memcpy(set.indices.data(), bytes.data() + 4 * n, 4 * n);
}

}  // namespace commsgd::algorithms
