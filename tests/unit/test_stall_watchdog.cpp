// The stall watchdog's parts that need no job: the registry of waits on peers it reads, the
// communication watchdog's calls of the stall handler and of a wait's end, and the
// --comm-timeout values and automatic rule. Ending a real job is tested under mpirun
// (tests/mpi/test_faults.cpp) and across emulated hosts whose link fails
// (tests/cluster/dead_link.sh); a Work's wait ended at its deadline in tests/mpi/test_engine.cpp.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/comm/watchdog.hpp"
#include "algorithms/comm/work.hpp"
#include "tests/support/wait_limit.hpp"
#include "trainer/comm_timeout.hpp"

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

// A blocking call cannot end itself: the watchdog hands it to the stall handler once it has
// waited the limit, and only once, however long it goes on. One handler at a time.
TEST(Watchdog, ABlockingCallPastTheLimitGoesToTheStallHandlerOnce) {
  const testing::WaitLimitFor limit(0.2);
  std::mutex mutex;
  std::condition_variable reported;
  std::vector<comm::LongestWait> reports;
  {
    const comm::StallReporting reporting([&](const comm::LongestWait& wait, double seconds) {
      EXPECT_EQ(seconds, 0.2);
      const std::lock_guard lock(mutex);
      reports.push_back(wait);
      reported.notify_all();
    });
    EXPECT_THROW(comm::StallReporting([](const comm::LongestWait&, double) {}), std::logic_error);
    const comm::PendingWait wait("receive", 4, 3);
    std::unique_lock lock(mutex);
    EXPECT_TRUE(
        reported.wait_for(lock, std::chrono::seconds(10), [&] { return !reports.empty(); }));
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // more looks, no more calls
  }
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].operation, "receive");
  EXPECT_EQ(reports[0].peers, "rank 3");
  EXPECT_GE(reports[0].seconds, 0.2);
}

// A wait that ends before its deadline is never ended; nor is one while there is no limit.
TEST(Watchdog, AWaitThatEndsInTimeOrHasNoLimitIsNotEnded) {
  for (const double seconds : {0.05, std::numeric_limits<double>::infinity()}) {
    const testing::WaitLimitFor limit(seconds);
    bool ended = false;
    {
      const comm::WatchedWait wait([&](const std::string&) { ended = true; });
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_FALSE(ended) << seconds << " s: ended within the grace after the limit";
  }
}

TEST(CommTimeout, ParsesAutoOffAndSeconds) {
  EXPECT_EQ(trainer::parse_comm_timeout("auto").mode, trainer::CommTimeout::Mode::automatic);
  EXPECT_EQ(trainer::parse_comm_timeout("off").mode, trainer::CommTimeout::Mode::off);
  const trainer::CommTimeout fixed = trainer::parse_comm_timeout("12.5");
  EXPECT_EQ(fixed.mode, trainer::CommTimeout::Mode::fixed);
  EXPECT_EQ(fixed.seconds, 12.5);
  EXPECT_EQ(trainer::to_string(fixed), "12.5");
  EXPECT_EQ(trainer::to_string(trainer::parse_comm_timeout("auto")), "auto");
  for (const char* bad : {"0", "-3", "inf", "nan", "12s", "", "never"}) {
    EXPECT_THROW(trainer::parse_comm_timeout(bad), std::invalid_argument) << bad;
  }
}

TEST(CommTimeout, AutomaticIsTheCeilingInWarmUpThenFollowsTheSlowestStep) {
  using trainer::automatic_comm_timeout, trainer::kCeilingSeconds, trainer::kFloorSeconds;
  EXPECT_EQ(automatic_comm_timeout(0, 0), kCeilingSeconds);
  EXPECT_EQ(automatic_comm_timeout(trainer::kWarmupSteps, 0.01), kCeilingSeconds);
  EXPECT_EQ(automatic_comm_timeout(trainer::kWarmupSteps + 1, 0.01), kFloorSeconds);
  EXPECT_EQ(automatic_comm_timeout(100, 4), trainer::kStepsOfSlack * 4);
  EXPECT_EQ(automatic_comm_timeout(100, 1000), kCeilingSeconds);
}

TEST(CommTimeout, SetsTheOneWaitLimit) {
  using trainer::kCeilingSeconds, trainer::parse_comm_timeout, trainer::wait_limit_for;
  EXPECT_EQ(wait_limit_for(parse_comm_timeout("12.5"), 0, 0, false), 12.5);
  EXPECT_EQ(wait_limit_for(parse_comm_timeout("12.5"), 0, 0, true), kCeilingSeconds)
      << "while peers write a checkpoint";
  EXPECT_EQ(wait_limit_for(parse_comm_timeout("900"), 0, 0, true), 900);
  EXPECT_TRUE(std::isinf(wait_limit_for(parse_comm_timeout("off"), 100, 4, false)));
  EXPECT_TRUE(std::isinf(wait_limit_for(parse_comm_timeout("off"), 100, 4, true)));
  EXPECT_EQ(wait_limit_for(parse_comm_timeout("auto"), 100, 4, false), trainer::kStepsOfSlack * 4);
  EXPECT_EQ(wait_limit_for(parse_comm_timeout("auto"), 100, 4, true), kCeilingSeconds);
}

TEST(WaitLimit, IsOneValueForTheProcessAndSaysItsOption) {
  const double before = comm::wait_limit_seconds();
  comm::set_wait_limit_seconds(2.5);
  EXPECT_EQ(comm::wait_limit_seconds(), 2.5);
  EXPECT_EQ(comm::wait_limit_text(2.5), "2.5 s (--comm-timeout)");
  EXPECT_EQ(comm::wait_limit_text(60), "60 s (--comm-timeout)");
  for (const double bad : {0.0, -1.0, std::nan("")}) {
    EXPECT_THROW(comm::set_wait_limit_seconds(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(comm::wait_limit_seconds(), 2.5) << "a refused value changes nothing";
  comm::set_wait_limit_seconds(before);
}

}  // namespace
}  // namespace commsgd
