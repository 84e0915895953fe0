#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

// The bytes a sparse entry takes on the wire: its value and its index.
inline constexpr std::size_t kSparseEntryBytes = sizeof(float) + sizeof(std::uint32_t);

// A sparse set's entries where they already lie, read only: a SparseSet's, or a received
// message's, which gTop-k's merge then reads without copying them out first.
struct SparseView {
  std::span<const float> values;
  std::span<const std::uint32_t> indices;

  SparseView(std::span<const float> values, std::span<const std::uint32_t> indices)
      : values(values), indices(indices) {}
  SparseView(const SparseSet& s) : values(s.values), indices(s.indices) {}  // NOLINT: implicit
  std::size_t size() const { return indices.size(); }
};

}  // namespace commsgd::kernels
