#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "algorithms/extension_table.hpp"
#include "algorithms/traffic.hpp"
#include "kernels/buffer.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::algorithms {

// Step 3 of the sparse family (docs/design.md, "Sparse family"): combine every rank's selected
// entries into one global update U (a sum, not a mean), bit-identical on every rank. Two parts,
// timed apart: exchange() is the collective, write_update() the local writing of U into a dense
// buffer, which costs as much for every aggregation (a pass over all d entries).
class Aggregation {
 public:
  virtual ~Aggregation() = default;
  // A collective. local: this rank's selection, sorted by index. applied[i] (resized to
  // local.size()): whether local entry i is part of U; what was selected but not applied goes
  // back into the residual.
  virtual void exchange(const kernels::SparseSet& local, std::size_t k,
                        std::vector<std::uint8_t>& applied) = 0;
  // Local: overwrites update (dense, length d, host or device memory) with the U of the last
  // exchange().
  virtual void write_update(kernels::Buffer<float> update) = 0;
};

// One row per --aggregation value: its name, one line for --help, its factory (given the resolved
// configuration, for an aggregation's parameters of its own), and what it sends (the traffic of
// every sparse algorithm row that uses it, for the cost model).
struct AggregationRow {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Aggregation> (*make)(const AlgorithmConfig& config, comm::Communicator& comm);
  Traffic traffic = Traffic::unstated;
};
ExtensionTable<AggregationRow>& aggregation_table();

// The aggregation config.aggregation names.
std::unique_ptr<Aggregation> make_aggregation(const AlgorithmConfig& config,
                                              comm::Communicator& comm);

// The wire format of a sparse set: its values (float32) then its indices (uint32), 8 bytes an
// entry, never float64 (the original code's messages were twice as large).
void pack(const kernels::SparseSet& set, std::vector<std::byte>& bytes);
// The same bytes in two parts, values and indices, where the set holds them: an exchange of the
// parts (Communicator::exchange) receives the packed set without a packed copy being sent.
std::array<std::span<const std::byte>, 2> wire_parts(const kernels::SparseSet& set);
void unpack(std::span<const std::byte> bytes, kernels::SparseSet& set);
// The entries of a packed set where they lie in `bytes`, which must outlive the view.
kernels::SparseView entries_of(std::span<const std::byte> bytes);

}  // namespace commsgd::algorithms
