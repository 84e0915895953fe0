#include "trainer/stall_watchdog.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "trainer/exit_codes.hpp"

namespace commsgd::trainer {
namespace {

std::chrono::duration<double> seconds(double s) {
  return std::chrono::duration<double>(s);
}

}  // namespace

StallWatchdog::StallWatchdog(CommTimeout timeout, comm::Communicator& comm,
                             std::function<void(const std::string&)> record)
    : timeout_(timeout), comm_(comm), record_(std::move(record)) {
  {
    const std::lock_guard lock(mutex_);
    publish_limit();
  }
  if (timeout_.mode != CommTimeout::Mode::off) {
    reporting_.emplace(
        [this](const comm::LongestWait& wait, double limit) { end_job(wait, limit); });
  }
}

void StallWatchdog::step_done(double seconds) {
  const std::lock_guard lock(mutex_);
  if (++steps_done_ > kWarmupSteps) slowest_step_ = std::max(slowest_step_, seconds);
  publish_limit();
}

StallWatchdog::PeersWriting::PeersWriting(StallWatchdog& watchdog) : watchdog_(watchdog) {
  const std::lock_guard lock(watchdog_.mutex_);
  ++watchdog_.peers_writing_;
  watchdog_.publish_limit();
}

StallWatchdog::PeersWriting::~PeersWriting() {
  const std::lock_guard lock(watchdog_.mutex_);
  --watchdog_.peers_writing_;
  watchdog_.publish_limit();
}

void StallWatchdog::publish_limit() const {
  comm::set_wait_limit_seconds(
      wait_limit_for(timeout_, steps_done_, slowest_step_, peers_writing_ > 0));
}

void StallWatchdog::end_job(const comm::LongestWait& wait, double limit) {
  const std::string reason = fmt::format(
      "stalled: waited {:.0f} s in {} for {} (--comm-timeout {}{:.0f} s); a host, link or peer "
      "rank stopped answering, and the job is ended with exit code {}",
      wait.seconds, wait.operation, wait.peers,
      timeout_.mode == CommTimeout::Mode::fixed ? "" : "auto: ", limit, kExitStalled);
  fmt::print(stderr, "commsgd-train: error: rank {}: {}\n", comm_.rank(), reason);
  std::fflush(stderr);
  record_(reason);
  std::this_thread::sleep_for(seconds(kLauncherGraceSeconds));
  std::thread([] {
    std::this_thread::sleep_for(seconds(kAbortSeconds));
    _exit(kExitStalled);
  }).detach();
  comm_.abort(kExitStalled);
}

}  // namespace commsgd::trainer
