#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <stdexcept>

#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/sparse_ops.hpp"

namespace commsgd::kernels::cuda {
namespace {

// An empty slot's index: sorts after every real one (indices are below 2^32 − 1).
constexpr std::uint32_t kNoIndex = 0xffffffffu;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + detail::kStreamThreads - 1) / detail::kStreamThreads);
}

// a's slots, then b's, one array: a slot past a set's count is empty.
__global__ void concatenate(const float* a_values, const std::uint32_t* a_indices,
                            const std::uint32_t* a_count, std::size_t a_slots,
                            const float* b_values, const std::uint32_t* b_indices,
                            const std::uint32_t* b_count, std::size_t b_slots,
                            std::uint32_t* indices, float* values) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= a_slots + b_slots) return;
  const bool from_a = i < a_slots;
  const std::size_t j = from_a ? i : i - a_slots;
  const bool used = j < (from_a ? *a_count : *b_count);
  indices[i] = used ? (from_a ? a_indices : b_indices)[j] : kNoIndex;
  values[i] = used ? (from_a ? a_values : b_values)[j] : 0.0f;
}

// Sorted by index, a stable sort keeps a's entry before b's on a shared index: the first of a
// run holds the sum (a + b, added in the CPU merge's order), the second becomes an empty slot.
__global__ void sum_neighbours(const std::uint32_t* indices, float* values, std::int32_t* keys,
                               std::size_t slots) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= slots) return;
  const std::uint32_t index = indices[i];
  const bool present = index != kNoIndex && (i == 0 || indices[i - 1] != index);
  float value = values[i];
  if (present && i + 1 < slots && indices[i + 1] == index) value += values[i + 1];
  // Only the slot's own thread writes values[i]; its neighbour reads values[i + 1], which the
  // thread for i + 1 leaves unchanged whenever it is a second of a run.
  if (present) values[i] = value;
  keys[i] = present ? detail::abs_key(value) : -1;
}

__global__ void scatter_add_kernel(const float* values, const std::uint32_t* indices,
                                   const std::uint32_t* count, std::size_t capacity, float* dense) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < capacity && i < *count) dense[indices[i]] += values[i];
}

__global__ void zero_applied_kernel(const std::uint32_t* indices, const std::uint32_t* count,
                                    std::size_t capacity, const std::uint8_t* applied,
                                    float* dense) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < capacity && i < *count && applied[i] != 0) dense[indices[i]] = 0.0f;
}

}  // namespace

void SparseMerger::merge_keep_k(const DeviceSparseSet& a, const DeviceSparseSet& b, std::size_t k,
                                DeviceSparseSet& out, cudaStream_t stream) {
  if (&out == &a || &out == &b) {
    throw std::invalid_argument("cuda merge_keep_k: out aliases an input");
  }
  if (k < 1) throw std::invalid_argument("cuda merge_keep_k: k < 1");
  const std::size_t slots = a.capacity() + b.capacity();
  if (slots == 0 || slots > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("cuda merge_keep_k: input capacities must sum to [1, 2^31)");
  }
  indices_.reserve(slots, stream);
  sorted_indices_.reserve(slots, stream);
  values_.reserve(slots, stream);
  sorted_values_.reserve(slots, stream);
  keys_.reserve(slots, stream);
  out.reserve(k, stream);

  concatenate<<<blocks_for(slots), detail::kStreamThreads, 0, stream>>>(
      a.values.data(), a.indices.data(), a.count.data(), a.capacity(), b.values.data(),
      b.indices.data(), b.count.data(), b.capacity(), indices_.data(), values_.data());
  std::size_t sort_bytes = 0;
  const int items = static_cast<int>(slots);
  check(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, indices_.data(), sorted_indices_.data(),
                                      values_.data(), sorted_values_.data(), items, 0, 32, stream),
      "cuda merge_keep_k sort size");
  sort_scratch_.reserve(sort_bytes, stream);
  check(cub::DeviceRadixSort::SortPairs(sort_scratch_.data(), sort_bytes, indices_.data(),
                                        sorted_indices_.data(), values_.data(),
                                        sorted_values_.data(), items, 0, 32, stream),
        "cuda merge_keep_k sort");
  sum_neighbours<<<blocks_for(slots), detail::kStreamThreads, 0, stream>>>(
      sorted_indices_.data(), sorted_values_.data(), keys_.data(), slots);
  check_launch("cuda merge_keep_k");

  const detail::SlotEntries entries{keys_.data(), sorted_values_.data(), sorted_indices_.data()};
  const auto rank = static_cast<std::uint32_t>(std::min<std::size_t>(k, slots));
  detail::radix_select(entries, slots, rank, scratch_, stream);
  detail::count_selected(entries, slots, scratch_.bound.data(), scratch_.tiles, stream);
  detail::write_selected(entries, slots, scratch_.bound.data(), scratch_.tiles, out, stream);
}

void scatter_add(const DeviceSparseSet& s, float* dense, cudaStream_t stream) {
  if (s.capacity() == 0) return;
  scatter_add_kernel<<<blocks_for(s.capacity()), detail::kStreamThreads, 0, stream>>>(
      s.values.data(), s.indices.data(), s.count.data(), s.capacity(), dense);
  check_launch("cuda scatter_add");
}


void zero_applied(float* dense, const DeviceSparseSet& s, const std::uint8_t* applied,
                  cudaStream_t stream) {
  if (s.capacity() == 0) return;
  zero_applied_kernel<<<blocks_for(s.capacity()), detail::kStreamThreads, 0, stream>>>(
      s.indices.data(), s.count.data(), s.capacity(), applied, dense);
  check_launch("cuda zero_applied");
}

}  // namespace commsgd::kernels::cuda
