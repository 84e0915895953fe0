#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "algorithms/comm/work.hpp"

namespace commsgd::comm {

// The one watchdog of communication, in the manner of c10d's: one thread of the process holds
// every wait on peers under way to the wait limit (work.hpp, --comm-timeout), and is the one that
// decides a wait has stalled. Two kinds of wait:
//  - A wait that can be ended (Work::wait, Engine::pause, the NCCL back end's polling) holds a
//    WatchedWait while it waits: how to read its progress and how to end it. Once it has seen no
//    progress for the limit and kSelfEndingGraceSeconds more, the watchdog ends it, once, and the
//    wait throws. The grace lets a stalled blocking call, which names the peers, be reported
//    first.
//  - A blocking call (a PendingWait: a thread blocked in MPI, which nothing can interrupt) that
//    has waited the limit goes, once, to the program's stall handler (StallReporting; the
//    trainer's records the run failed and ends the job). Without a handler it waits on.
// The watchdog looks ten times per limit, and at least once a second; with nothing registered it
// sleeps. It starts with the first registration and lives as long as the process.
class WatchedWait {
 public:
  // A wait that polls: it asks ended() between its looks at what it waits for.
  WatchedWait();
  // A wait that blocks: `end(limit)` is called at most once, on the watchdog's thread, with the
  // limit as wait_limit_text() names it, and should wake the wait, which then throws.
  // `progress`, if given, is read on the watchdog's thread, and the deadline counts from its last
  // change (a listener's messages handled). Neither is called once the destructor has returned.
  explicit WatchedWait(std::function<void(const std::string& limit)> end,
                       std::function<std::uint64_t()> progress = {});
  ~WatchedWait();
  WatchedWait(const WatchedWait&) = delete;
  WatchedWait& operator=(const WatchedWait&) = delete;

  // Once the watchdog has ended the wait: the limit, as wait_limit_text() names it.
  std::optional<std::string> ended() const;

 private:
  std::shared_ptr<struct WatchedEntry> entry_;
};

// What a program does when a blocking call has waited the limit: called once, on the watchdog's
// thread, with that wait and the limit. It may end the process.
using StallHandler = std::function<void(const LongestWait& wait, double limit)>;

// Sets the stall handler while it lives; one at a time. Its destructor waits for a call of the
// handler under way.
class StallReporting {
 public:
  explicit StallReporting(StallHandler handler);
  ~StallReporting();
  StallReporting(const StallReporting&) = delete;
  StallReporting& operator=(const StallReporting&) = delete;
};

}  // namespace commsgd::comm
