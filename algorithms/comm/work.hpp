#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// The one deadline of communication (--comm-timeout): how long a wait on peers may go without
// progress before it fails. One value for the process, which the watchdog (watchdog.hpp) holds
// every wait to: a Work's, an Engine::pause, the NCCL back end's polling, and the blocking calls
// (PendingWait below). The trainer's stall watchdog sets it, and follows the step time with it
// where the timeout is automatic. Infinity: waits never end. Until set: kDefaultWaitLimitSeconds.
inline constexpr double kDefaultWaitLimitSeconds = 600;
double wait_limit_seconds();
// Throws std::invalid_argument unless seconds > 0 (infinity included).
void set_wait_limit_seconds(double seconds);
// "N s (--comm-timeout)", N as short as it is exact: how the deadline names itself.
std::string wait_limit_text(double seconds);
// A wait the watchdog can end (a Work's, an Engine::pause, the NCCL back end's polling) is ended
// this long after the limit. A stalled blocking call is reported first: it names the peers, and
// the job must end anyway (a thread blocked in MPI cannot be freed). Ending a wait is for what no
// blocking call shows (a listener probing, work queued behind a failed operation) and for
// programs that set no stall handler.
inline constexpr double kSelfEndingGraceSeconds = 5;

// What an Engine and the Works it handed out share: one lock, one signal and the engine's
// failure. Held by both, so a Work may outlive its engine.
struct EngineCore {
  std::mutex mutex;
  std::condition_variable changed;
  std::exception_ptr failure;  // the first error; sticky

  // Fails the engine with `error` unless it failed already, and wakes every waiter; returns
  // `error` (lock held).
  std::exception_ptr fail(std::exception_ptr error) {
    if (!failure) failure = error;
    changed.notify_all();
    return error;
  }
};

// One operation's state (guarded by the core's mutex).
struct WorkState {
  WorkState(std::shared_ptr<EngineCore> c, std::string n)
      : core(std::move(c)), name(std::move(n)) {}
  std::shared_ptr<EngineCore> core;
  const std::string name;
  bool completed = false;
  std::exception_ptr error;
  // Messages handled, for a listener: a wait's deadline counts from the last.
  std::uint64_t progress = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  double seconds = 0;
};

// The handle of an operation started on an Engine, as c10d's Work: whether it completed, its
// error, what it moved and how long it took, and a wait with the engine's deadline. Copies share
// the one operation. A default-made Work stands for no operation: completed, without error.
class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<WorkState> state) : state_(std::move(state)) {}

  // Never blocks.
  bool completed() const;
  // Blocks until the operation completed and throws its error, if it had one, or until the
  // engine failed, and throws that. The watchdog fails the engine with a std::runtime_error
  // once the wait has seen no progress for the limit and kSelfEndingGraceSeconds (a listener
  // progresses with every message it handles).
  void wait() const;
  // Once completed: its error (null if none), the bytes it sent and received and its seconds on
  // the engine's thread.
  std::exception_ptr error() const;
  std::uint64_t bytes_sent() const;
  std::uint64_t bytes_received() const;
  double seconds() const;

 private:
  void rethrow_error() const;  // the operation's error, if it completed with one

  std::shared_ptr<WorkState> state_;
};

// A wait on peers under way in this process, right now. Every blocking call of Communicator
// registers one for its duration, on whichever thread makes it, so that the stall watchdog
// (trainer/stall_watchdog.hpp) can tell a rank blocked on its peers from one doing local work
// (loading data, computing, writing a checkpoint), and can name the operation and the peers: a
// blocked call cannot be interrupted, so the watchdog (watchdog.hpp), not the call, enforces the
// wait limit on it. Registering costs a lock and no allocation.
class PendingWait {
 public:
  using Clock = std::chrono::steady_clock;

  // A collective: every one of `ranks` ranks takes part.
  PendingWait(const char* operation, int ranks);
  // Point to point with one peer (or Communicator::kAnyPeer).
  PendingWait(const char* operation, int ranks, int peer);
  // A round of messages (send_receive): the peers are those of `sends` and `receives`.
  PendingWait(const char* operation, int ranks, std::span<const Outgoing> sends,
              std::span<const Incoming> receives);
  ~PendingWait();
  PendingWait(const PendingWait&) = delete;
  PendingWait& operator=(const PendingWait&) = delete;

 private:
  friend struct PendingWaits;
  std::string peers() const;

  const char* operation_;
  int ranks_;
  std::optional<int> peer_;
  std::span<const Outgoing> sends_;
  std::span<const Incoming> receives_;
  Clock::time_point since_;
  PendingWait* previous_ = nullptr;  // the list of waits, oldest first
  PendingWait* next_ = nullptr;
};

// The wait that began first, as a stall report shows it.
struct LongestWait {
  std::string operation;  // "allreduce", "receive", ...
  std::string peers;      // "all 4 ranks", "rank 3", "ranks 1, 3"
  double seconds = 0;
};
std::optional<LongestWait> longest_wait();

}  // namespace commsgd::comm
