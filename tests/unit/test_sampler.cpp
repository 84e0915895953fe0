#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

#include "trainer/data/sampler.hpp"

namespace commsgd::data {
namespace {

using Indices = std::vector<std::uint32_t>;

// The epoch's full permutation, as a single rank sees it.
Indices full_permutation(std::size_t n, std::uint64_t seed, int epoch) {
  return DistributedSampler(n, 0, 1, seed).epoch_indices(epoch);
}

struct Case {
  std::size_t n;
  int world_size;
};

const Case kCases[] = {{10, 1}, {10, 2}, {10, 3}, {17, 4}, {100, 7},
                       {64, 8}, {5, 5},  {3, 4},  {0, 2}};

TEST(DistributedSampler, SingleRankEpochIsAPermutation) {
  for (std::size_t n : {0, 1, 2, 10, 1000}) {
    Indices perm = full_permutation(n, 3, 0);
    std::ranges::sort(perm);
    Indices identity(n);
    std::iota(identity.begin(), identity.end(), 0U);
    EXPECT_EQ(perm, identity) << "n=" << n;
  }
}

TEST(DistributedSampler, ShardsStridePermutationDisjointly) {
  for (const auto [n, world] : kCases) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " P=" << world);
    const Indices perm = full_permutation(n, 11, 2);
    const std::size_t shard_size = n / static_cast<std::size_t>(world);
    const std::size_t used = shard_size * static_cast<std::size_t>(world);
    std::multiset<std::uint32_t> union_of_shards;
    for (int rank = 0; rank < world; ++rank) {
      const DistributedSampler sampler(n, rank, world, 11);
      EXPECT_EQ(sampler.shard_size(), shard_size);
      const Indices shard = sampler.epoch_indices(2);
      ASSERT_EQ(shard.size(), shard_size);
      const auto stride = static_cast<std::size_t>(world);
      for (std::size_t k = 0; k < shard_size; ++k) {
        EXPECT_EQ(shard[k], perm[static_cast<std::size_t>(rank) + k * stride]);
      }
      union_of_shards.insert(shard.begin(), shard.end());
    }
    // As a multiset, equality also proves the shards are disjoint.
    EXPECT_EQ(union_of_shards, std::multiset<std::uint32_t>(perm.begin(), perm.begin() + used));
    if (used == n) {
      std::set<std::uint32_t> all;
      for (std::uint32_t i = 0; i < n; ++i) all.insert(i);
      EXPECT_EQ(std::set<std::uint32_t>(union_of_shards.begin(), union_of_shards.end()), all);
    }
  }
}

// Batch s on every rank together must be exactly batch s of a single rank
// using the world's combined batch size, in any order.
TEST(DistributedSampler, BatchUnionMatchesSingleRankBatch) {
  struct BatchCase {
    std::size_t n;
    int world_size;
    std::size_t batch;
  };
  for (const auto [n, world, batch] :
       {BatchCase{96, 4, 3}, BatchCase{103, 3, 5}, BatchCase{50, 1, 7}, BatchCase{1000, 8, 16}}) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " P=" << world << " b=" << batch);
    const Indices single = full_permutation(n, 5, 1);
    std::vector<Indices> shards;
    for (int rank = 0; rank < world; ++rank) {
      shards.push_back(DistributedSampler(n, rank, world, 5).epoch_indices(1));
    }
    const std::size_t global_batch = batch * static_cast<std::size_t>(world);
    for (std::size_t s = 0; (s + 1) * batch <= shards[0].size(); ++s) {
      Indices combined;
      for (const Indices& shard : shards) {
        combined.insert(combined.end(), shard.begin() + static_cast<std::ptrdiff_t>(s * batch),
                        shard.begin() + static_cast<std::ptrdiff_t>((s + 1) * batch));
      }
      Indices expected(single.begin() + static_cast<std::ptrdiff_t>(s * global_batch),
                       single.begin() + static_cast<std::ptrdiff_t>((s + 1) * global_batch));
      std::ranges::sort(combined);
      std::ranges::sort(expected);
      EXPECT_EQ(combined, expected) << "batch " << s;
    }
  }
}

TEST(DistributedSampler, ReshufflesEachEpochReproducibly) {
  const DistributedSampler sampler(200, 1, 4, 9);
  const Indices epoch0 = sampler.epoch_indices(0);
  EXPECT_NE(epoch0, sampler.epoch_indices(1));
  EXPECT_NE(sampler.epoch_indices(1), sampler.epoch_indices(2));
  EXPECT_EQ(epoch0, sampler.epoch_indices(0));
  EXPECT_EQ(sampler.epoch_indices(7), DistributedSampler(200, 1, 4, 9).epoch_indices(7));
}

TEST(DistributedSampler, SeedChangesOrder) {
  EXPECT_NE(full_permutation(200, 1, 0), full_permutation(200, 2, 0));
}

TEST(DistributedSampler, ShuffleActuallyPermutes) {
  Indices identity(200);
  std::iota(identity.begin(), identity.end(), 0U);
  EXPECT_NE(full_permutation(200, 1, 0), identity);
}

TEST(DistributedSampler, WithoutShuffleStridesIdentity) {
  for (int epoch : {0, 3}) {
    EXPECT_EQ(DistributedSampler(11, 0, 3, 4, false).epoch_indices(epoch), (Indices{0, 3, 6}));
    EXPECT_EQ(DistributedSampler(11, 2, 3, 4, false).epoch_indices(epoch), (Indices{2, 5, 8}));
  }
}

TEST(DistributedSampler, RejectsInvalidArguments) {
  EXPECT_THROW(DistributedSampler(10, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(10, -1, 2, 1), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(10, 2, 2, 1), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(std::size_t{1} << 33, 0, 1, 1), std::invalid_argument);
  EXPECT_NO_THROW(DistributedSampler(10, 1, 2, 1));
}

}  // namespace
}  // namespace commsgd::data
