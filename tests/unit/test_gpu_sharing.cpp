// Whether the ranks of a job drive GPUs of their own, decided from the GPUs' UUIDs as the ranks
// report them, and which device back end follows (trainer/gpu_sharing.hpp): no GPU needed.
#include "trainer/gpu_sharing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace commsgd::trainer {
namespace {

GpuUuid gpu(std::uint8_t node, std::uint8_t slot) {
  GpuUuid u{};
  u[0] = node;
  u[15] = slot;
  return u;
}

TEST(GpuSharing, OneGpuBoundToEachRankIsOwnedEvenThoughEveryRankCallsItDeviceZero) {
  // Two nodes of four GPUs, Slurm's --gpu-bind=single:1: every rank sees one device, index 0,
  // each a different GPU.
  std::vector<GpuUuid> ranks;
  for (std::uint8_t node = 0; node < 2; ++node) {
    for (std::uint8_t slot = 0; slot < 4; ++slot) ranks.push_back(gpu(node, slot));
  }
  EXPECT_FALSE(find_shared_gpu(ranks));
}

TEST(GpuSharing, RanksBeyondTheNodesGpusShareOne) {
  // Three ranks, two GPUs: local rank 2 takes GPU 2 % 2 = 0, local rank 0's.
  const std::vector<GpuUuid> ranks = {gpu(0, 0), gpu(0, 1), gpu(0, 0)};
  const std::optional<SharedGpu> shared = find_shared_gpu(ranks);
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->first_rank, 0);
  EXPECT_EQ(shared->second_rank, 2);
}

TEST(GpuSharing, TheSameIndexOnEveryRankOfANodeIsOneGpu) {
  // --device cuda:0 on two nodes of two ranks, every rank seeing both of its node's GPUs.
  const std::vector<GpuUuid> ranks = {gpu(0, 0), gpu(0, 0), gpu(1, 0), gpu(1, 0)};
  const std::optional<SharedGpu> shared = find_shared_gpu(ranks);
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->first_rank, 0);
  EXPECT_EQ(shared->second_rank, 1);
}

TEST(GpuSharing, TheLowestSharingPairIsNamed) {
  const std::vector<GpuUuid> ranks = {gpu(0, 0), gpu(0, 1), gpu(0, 2), gpu(0, 1), gpu(0, 0)};
  const std::optional<SharedGpu> shared = find_shared_gpu(ranks);
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->first_rank, 1);
  EXPECT_EQ(shared->second_rank, 3);
}

TEST(GpuSharing, OneRankOwnsItsGpu) {
  EXPECT_FALSE(find_shared_gpu(std::vector<GpuUuid>{gpu(0, 0)}));
}

// NCCL moves device buffers past the host calls --emulate-link-mbps throttles: an emulated link
// takes the staged back end even where every rank owns its GPU.
TEST(GpuSharing, NcclOnlyForOwnedGpusOnAnUnemulatedLink) {
  EXPECT_EQ(device_backend_for(false, false), DeviceBackendKind::nccl);
  EXPECT_EQ(device_backend_for(false, true), DeviceBackendKind::staged);
  EXPECT_EQ(device_backend_for(true, false), DeviceBackendKind::staged);
  EXPECT_EQ(device_backend_for(true, true), DeviceBackendKind::staged);
}

TEST(GpuSharing, UuidsReadAsNvidiaSmiPrintsThem) {
  GpuUuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(0x10 * (i % 16) + i);
  EXPECT_EQ(gpu_uuid_text(u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

}  // namespace
}  // namespace commsgd::trainer
