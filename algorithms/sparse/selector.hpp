#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/sparse_set.hpp"

namespace commsgd::algorithms {

// Step 2 of the sparse family (DESIGN.md): which entries of acc this rank proposes. The result is
// sorted by index and holds acc's values at those indices.
class Selector {
 public:
  virtual ~Selector() = default;
  virtual void select(std::span<const float> acc, std::size_t k, std::uint64_t iteration,
                      kernels::SparseSet& out) = 0;
};

const std::vector<std::string>& selector_names();  // exact, gaussian, dgc, random

// `seed` is shared by all ranks: the random selector draws the same indices everywhere.
std::unique_ptr<Selector> make_selector(const std::string& name, std::uint64_t seed);

}  // namespace commsgd::algorithms
