#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/extension_table.hpp"
#include "kernels/buffer.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::algorithms {

// Step 2 of the sparse family (docs/design.md, "Sparse family"): which entries of acc this rank
// proposes. The result is sorted by index and holds acc's values at those indices.
class Selector {
 public:
  virtual ~Selector() = default;
  // k = max(1, ceil(density·d)) entries asked for (some selectors take more or fewer);
  // `iteration` counts from 0 and seeds the random ones.
  virtual void select(std::span<const float> acc, std::size_t k, double density,
                      std::uint64_t iteration, kernels::SparseSet& out) = 0;

  // Whether select_in works on acc in `memory` (host memory: every selector; a CUDA device: those
  // with a CUDA twin, kernels/ops.hpp's DeviceSelection).
  virtual bool works_in(kernels::Memory memory) const { return memory == kernels::Memory::host; }
  // select() wherever acc is: on a device, the same selection made there and handed to the host,
  // k entries over the bus rather than d.
  void select_in(kernels::Buffer<const float> acc, std::size_t k, double density,
                 std::uint64_t iteration, kernels::SparseSet& out) {
    if (acc.on_host()) return select(acc.host("select"), k, density, iteration, out);
    select_on_device(acc, k, density, iteration, out);
  }

 protected:
  virtual void select_on_device(kernels::Buffer<const float> acc, std::size_t k, double density,
                                std::uint64_t iteration, kernels::SparseSet& out);
};

// One row per --selector value: its name, one line for --help, and its factory. The factory gets
// the resolved configuration, so that a selector with a parameter of its own reads it there
// (`seed` is --seed, the same on every rank: the random selector draws the same indices
// everywhere), and `rank`, to draw differently on each rank.
struct SelectorRow {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Selector> (*make)(const AlgorithmConfig& config, int rank);
};
ExtensionTable<SelectorRow>& selector_table();

// The selector config.selector names.
std::unique_ptr<Selector> make_selector(const AlgorithmConfig& config, int rank);

}  // namespace commsgd::algorithms
