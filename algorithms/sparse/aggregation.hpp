#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::algorithms {

// Step 3 of the sparse family (DESIGN.md): combine every rank's selected entries into one global
// update U (a sum, not a mean), bit-identical on every rank. A collective.
class Aggregation {
 public:
  virtual ~Aggregation() = default;
  // local: this rank's selection, sorted by index. update (dense, length d): overwritten with U.
  // applied[i] (resized to local.size()): whether local entry i is part of U; what was selected
  // but not applied goes back into the residual.
  virtual void aggregate(const kernels::SparseSet& local, std::size_t k, std::span<float> update,
                         std::vector<std::uint8_t>& applied) = 0;
};

const std::vector<std::string>& aggregation_names();  // allgather, gtopk

std::unique_ptr<Aggregation> make_aggregation(const std::string& name, comm::Communicator& comm);

// The wire format of a sparse set: its values (float32) then its indices (uint32), 8 bytes an
// entry, never float64 (the original code's messages were twice as large).
void pack(const kernels::SparseSet& set, std::vector<std::byte>& bytes);
void unpack(std::span<const std::byte> bytes, kernels::SparseSet& set);

}  // namespace commsgd::algorithms
