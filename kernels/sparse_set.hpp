#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commsgd::kernels {

// A sparse vector: entries sorted by strictly increasing index, values[i] belongs to indices[i].
// Two flat arrays rather than an array of pairs, so that both travel as one contiguous message
// each (8 bytes an entry) and value loops stay vectorizable.
struct SparseSet {
  std::vector<float> values;
  std::vector<std::uint32_t> indices;
  std::size_t size() const { return indices.size(); }
  void clear() {
    values.clear();
    indices.clear();
  }
};

}  // namespace commsgd::kernels
