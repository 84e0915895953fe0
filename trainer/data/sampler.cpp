#include "trainer/data/sampler.hpp"

#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "trainer/data/rng.hpp"

namespace commsgd::data {

namespace {

std::vector<std::uint32_t> permutation(std::size_t n, std::uint64_t seed, int epoch, bool shuffle) {
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::uint32_t{0});
  if (!shuffle) return perm;
  // Seeding from (seed, epoch) rather than carrying state across epochs lets
  // any epoch be reproduced directly, e.g. after resuming from a checkpoint.
  std::uint64_t state = derive_seed(seed, static_cast<std::uint64_t>(epoch));
  for (std::size_t i = n; i > 1; --i) {  // Fisher-Yates, from the back
    const auto j = static_cast<std::size_t>(uniform_below(state, i));
    std::swap(perm[i - 1], perm[j]);
  }
  return perm;
}

}  // namespace

DistributedSampler::DistributedSampler(std::size_t dataset_size, int rank, int world_size,
                                       std::uint64_t seed, bool shuffle)
    : dataset_size_(dataset_size),
      rank_(rank),
      world_size_(world_size),
      seed_(seed),
      shuffle_(shuffle) {
  if (world_size < 1) {
    throw std::invalid_argument("DistributedSampler: world_size " + std::to_string(world_size) +
                                " must be >= 1");
  }
  if (rank < 0 || rank >= world_size) {
    throw std::invalid_argument("DistributedSampler: rank " + std::to_string(rank) +
                                " is outside [0, " + std::to_string(world_size) + ")");
  }
  if (dataset_size > std::size_t{std::numeric_limits<std::uint32_t>::max()} + 1) {
    throw std::invalid_argument("DistributedSampler: dataset_size " + std::to_string(dataset_size) +
                                " exceeds 32-bit indices");
  }
}

std::size_t DistributedSampler::shard_size() const {
  return dataset_size_ / static_cast<std::size_t>(world_size_);
}

std::vector<std::uint32_t> DistributedSampler::epoch_indices(int epoch) const {
  const std::vector<std::uint32_t> perm = permutation(dataset_size_, seed_, epoch, shuffle_);
  const auto stride = static_cast<std::size_t>(world_size_);
  std::vector<std::uint32_t> shard(shard_size());
  for (std::size_t k = 0; k < shard.size(); ++k) {
    shard[k] = perm[static_cast<std::size_t>(rank_) + k * stride];
  }
  return shard;
}

}  // namespace commsgd::data
