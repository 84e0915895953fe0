// Per-rank view of a shared, per-epoch shuffled order of a data set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commsgd::data {

// Every rank builds the same permutation `perm` of 0..n-1 for an epoch (from
// seed and epoch alone) and takes every world_size-th entry starting at its
// rank: perm[rank], perm[rank + P], ... for shard_size() entries; the last
// n mod P entries are dropped that epoch. Striding (rather than contiguous
// blocks) makes batch s of size b across all P ranks exactly
// perm[s*b*P, (s+1)*b*P), i.e. the batch a single rank with batch size b*P
// would see, which is what lets distributed runs be checked against 1-rank ones.
class DistributedSampler {
 public:
  // Throws std::invalid_argument if world_size < 1, rank is outside
  // [0, world_size) or dataset_size does not fit 32-bit indices.
  DistributedSampler(std::size_t dataset_size, int rank, int world_size, std::uint64_t seed,
                     bool shuffle = true);

  std::size_t shard_size() const;  // floor(dataset_size / world_size)

  // This rank's shard for `epoch`; reshuffled per epoch when shuffling.
  std::vector<std::uint32_t> epoch_indices(int epoch) const;

 private:
  std::size_t dataset_size_;
  int rank_;
  int world_size_;
  std::uint64_t seed_;
  bool shuffle_;
};

}  // namespace commsgd::data
