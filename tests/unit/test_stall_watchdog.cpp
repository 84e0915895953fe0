// The stall watchdog's parts that need no job: the registry of waits on peers it reads, and the
// --stall-timeout values and automatic rule. Ending a real job is tested under mpirun
// (tests/mpi/test_faults.cpp) and across emulated hosts whose link fails
// (tests/cluster/dead_link.sh).
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <stdexcept>
#include <thread>

#include "algorithms/comm/pending_waits.hpp"
#include "trainer/stall_timeout.hpp"

namespace commsgd {
namespace {

TEST(PendingWaits, NoneOutsideACall) {
  EXPECT_FALSE(comm::longest_wait().has_value());
}

TEST(PendingWaits, TheOldestWaitOnAnyThreadIsTheLongest) {
  const comm::PendingWait collective("allreduce", 4);
  std::optional<comm::LongestWait> seen_from_another_thread;
  std::thread([&] {
    const comm::PendingWait one_peer("receive", 4, 3);
    seen_from_another_thread = comm::longest_wait();
  }).join();
  ASSERT_TRUE(seen_from_another_thread.has_value());
  EXPECT_EQ(seen_from_another_thread->operation, "allreduce");
  EXPECT_EQ(seen_from_another_thread->peers, "all 4 ranks");
  EXPECT_GE(seen_from_another_thread->seconds, 0.0);
}

TEST(PendingWaits, AWaitThatEndsLeavesTheOthers) {
  std::optional<comm::PendingWait> first;
  first.emplace("send", 8, 5);
  const comm::PendingWait second("exchange", 8, 2);
  first.reset();
  const auto longest = comm::longest_wait();
  ASSERT_TRUE(longest.has_value());
  EXPECT_EQ(longest->operation, "exchange");
  EXPECT_EQ(longest->peers, "rank 2");
}

TEST(PendingWaits, ARoundNamesEachPeerOnce) {
  std::array<float, 2> data{};
  const std::array<comm::Outgoing, 2> sends = {comm::Outgoing{data.data(), 4, 3},
                                               comm::Outgoing{data.data(), 4, 1}};
  const std::array<comm::Incoming, 1> receives = {comm::Incoming{data.data(), 4, 3}};
  const comm::PendingWait round("send_receive", 8, sends, receives);
  EXPECT_EQ(comm::longest_wait()->peers, "ranks 1, 3");
}

TEST(PendingWaits, AnyPeerIsSaidSo) {
  const comm::PendingWait wait("receive", 6, comm::Communicator::kAnyPeer);
  EXPECT_EQ(comm::longest_wait()->peers, "any of 6 ranks");
}

TEST(StallTimeout, ParsesAutoOffAndSeconds) {
  EXPECT_EQ(trainer::parse_stall_timeout("auto").mode, trainer::StallTimeout::Mode::automatic);
  EXPECT_EQ(trainer::parse_stall_timeout("off").mode, trainer::StallTimeout::Mode::off);
  const trainer::StallTimeout fixed = trainer::parse_stall_timeout("12.5");
  EXPECT_EQ(fixed.mode, trainer::StallTimeout::Mode::fixed);
  EXPECT_EQ(fixed.seconds, 12.5);
  EXPECT_EQ(trainer::to_string(fixed), "12.5");
  EXPECT_EQ(trainer::to_string(trainer::parse_stall_timeout("auto")), "auto");
  for (const char* bad : {"0", "-3", "inf", "nan", "12s", "", "never"}) {
    EXPECT_THROW(trainer::parse_stall_timeout(bad), std::invalid_argument) << bad;
  }
}

TEST(StallTimeout, AutomaticIsTheCeilingInWarmUpThenFollowsTheSlowestStep) {
  using trainer::automatic_stall_timeout, trainer::kCeilingSeconds, trainer::kFloorSeconds;
  EXPECT_EQ(automatic_stall_timeout(0, 0), kCeilingSeconds);
  EXPECT_EQ(automatic_stall_timeout(trainer::kWarmupSteps, 0.01), kCeilingSeconds);
  EXPECT_EQ(automatic_stall_timeout(trainer::kWarmupSteps + 1, 0.01), kFloorSeconds);
  EXPECT_EQ(automatic_stall_timeout(100, 4), trainer::kStepsOfSlack * 4);
  EXPECT_EQ(automatic_stall_timeout(100, 1000), kCeilingSeconds);
}

}  // namespace
}  // namespace commsgd
