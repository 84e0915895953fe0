#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse_set.hpp"

namespace commsgd::kernels {

// gTop-k's merge: the union by index, a.value + b.value on a shared index (a is the lower rank's
// set, always added first so both partners compute the same bits), then the k entries first in
// the selection order (larger |value|; ties: smaller index), sorted by index; all of the union
// if it has at most k. out must not alias a or b; unsorted input throws std::invalid_argument.
// Runs on the widest instructions this CPU has that the environment allows (simd_path.hpp).
void merge_keep_k(SparseView a, SparseView b, std::size_t k, SparseSet& out);

// The same, and which entries of one input made it: marks[i] = 1 if the i-th entry of input
// `marked` has its index in out, else 0. gTop-k's last round learns this of its own set without
// carrying tags through the merge, which costs several times the marks' pass of compares.
enum class MergeInput { a, b };
void merge_keep_k(SparseView a, SparseView b, std::size_t k, SparseSet& out, MergeInput marked,
                  std::vector<std::uint8_t>& marks);

// The same, carrying a tag with each entry (a_tags[i] belongs to a's i-th entry): a kept entry
// keeps its tag, and a shared index takes the bitwise AND of its two. With kUntagged on one
// side, that is the other side's tag: gTop-k tags its own entries with their positions, and an
// entry whose tag comes through every round survived every round.
inline constexpr std::uint32_t kUntagged = ~0u;
void merge_keep_k(SparseView a, std::span<const std::uint32_t> a_tags, SparseView b,
                  std::span<const std::uint32_t> b_tags, std::size_t k, SparseSet& out,
                  std::vector<std::uint32_t>& out_tags);

// dense[s.indices[i]] += s.values[i].
void scatter_add(const SparseSet& s, std::span<float> dense);

// acc += g.
void add(std::span<float> acc, std::span<const float> g);

// Error feedback: dense[s.indices[i]] = 0 for every i with applied[i] != 0.
void zero_applied(std::span<float> dense, const SparseSet& s,
                  std::span<const std::uint8_t> applied);

}  // namespace commsgd::kernels
