#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/comm/work.hpp"
#include "kernels/ops.hpp"

namespace commsgd::comm {

class Engine;

// What an operation works with on the engine's thread: the engine's communicator, where it
// enqueues device work (the engine's stream; the host for host buffers), and the exclusive
// sections it shares with the algorithm's own thread.
struct Channel {
  Communicator& comm;
  Place place;
  std::timed_mutex& shared;  // Engine::Pause holds it too
  const Engine& engine;

  // Returns once a message from `peer` waits to be received. Probes with the pause of an idle
  // listener rather than blocking in MPI, whose wait spins a core that training needs; throws
  // once the engine has failed (a deadline passed).
  void await_message(int peer);

  // Runs `section` while no Engine::Pause is held: for state the algorithm's thread also touches.
  template <class Section>
  void exclusive(Section&& section) {
    const std::lock_guard lock(shared);
    section();
  }
};

// A background listener (Engine::listen): between operations the engine probes for a message from
// peer() and, once one waits, runs on_message on its thread.
struct Listener {
  // Whom to listen to next: a rank, or Communicator::kAnyPeer. Asked before every probe.
  std::function<int()> peer;
  // Receives the message from `from` and acts on it; returns whether to keep listening.
  std::function<bool(Channel&, int from)> on_message;
  // Asked between probes: true ends the listener without a message (nothing more will come).
  std::function<bool()> done;
};

// The asynchronous communication of one algorithm, in the manner of c10d's ProcessGroup and
// Horovod's background loop: one thread, over a duplicate of the caller's communicator (its
// messages never mix with the caller's) and, on a device, a stream of its own, runs what the
// algorithm starts and hands back a Work for each. What it guarantees:
//  - Order: operations run one at a time, in the order they were started, so at most one
//    collective of this engine is in flight on its communicator; every rank that starts the same
//    operations in the same order meets its peers in them. Listeners are probed only between
//    operations.
//  - Deadline: a wait on a Work, or for a Pause, that sees no progress for the wait limit
//    (work.hpp, --comm-timeout, and the grace a stalled blocking call gets to be reported first)
//    is ended by the watchdog (watchdog.hpp): it throws instead of hanging, and fails the engine.
//    The same watchdog ends the NCCL back end's waits and holds the engine thread's blocking
//    calls to the limit, so no device or host operation outlasts it either.
//  - Failure: the first operation or listener that throws fails the engine: every later one
//    completes at once with that error, without running, and the engine's device back end is
//    aborted when it stops (never finalized, which would wait for peers that may have stopped).
//  - Counting: the bytes and seconds of every operation and every message a listener handles
//    are counted here, once, for the algorithm's statistics.
// The thread's blocking calls register as a PendingWait like any other, so the stall watchdog
// sees them; a listener's idle probing is not a wait on peers.
class Engine {
 public:
  using Operation = std::function<void(Channel&)>;

  // Collective over `comm` (it duplicates it: with a device back end, that one too).
  explicit Engine(Communicator& comm);
  // Stops, if stop() was not called.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs what was started, ends the listeners and the thread. After a failure, or while an
  // exception unwinds the stack, it runs nothing more, and if the operation under way does not end
  // within a short grace (it waits on a peer that failed too), it ends the job
  // (Communicator::abort): the one way out that cannot hang. Buffers the operations used may be
  // freed after it, before the engine's stream goes with the engine.
  void stop();

  // Where the engine works on buffers in `memory`: on a device, its stream, made by the first
  // call on the calling thread's current device. Order the caller's stream against it with
  // kernels::ops::order_after.
  Place place(Memory memory);

  // Runs `operation` on the engine's thread after every operation started before it. On a
  // device, its work on the engine's stream also follows what was enqueued on `after`'s stream by
  // the time of this call (an event recorded now, on the caller's thread), not by the time the
  // operation runs: the caller may have queued much more there meanwhile (the rest of backward).
  Work start(std::string name, Operation operation, Place after = kHost);
  // Probes for messages between operations until the listener says it is done.
  Work listen(std::string name, Listener listener);

  // While a Pause is held, no operation is in an exclusive section (Channel::exclusive): the
  // caller may touch what those sections touch. Waits for the section under way, until the
  // watchdog ends the wait at the deadline.
  using Pause = std::unique_lock<std::timed_mutex>;
  [[nodiscard]] Pause pause();

  struct Totals {
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
    double seconds = 0;  // in operations and in handling messages, not in idle probing
  };
  Totals totals() const;

 private:
  friend struct Channel;
  struct Pending {
    std::shared_ptr<WorkState> work;
    Operation operation;
  };
  struct Listening {
    std::shared_ptr<WorkState> work;
    Listener listener;
  };

  // What one operation, or one message handled, did.
  struct Outcome {
    bool result = false;  // what the call returned
    std::exception_ptr error;
    double seconds = 0;
    std::uint64_t bytes_sent = 0, bytes_received = 0;
  };

  // A Work for `name`, handed to `queue` (lock held), or completed at once by a failed engine.
  Work submit(std::string name, const std::function<void(std::shared_ptr<WorkState>)>& queue);
  void loop();
  // Runs the next operation (lock held on entry and exit, released meanwhile).
  void run_next(std::unique_lock<std::mutex>& lock);
  // Probes each listener once, handling what waits; whether anything did.
  bool poll_listeners(std::unique_lock<std::mutex>& lock);
  // Calls `call` on the engine's thread, on its stream, and measures it.
  Outcome execute(Place place, const std::function<bool(Channel&)>& call);
  // Counts `outcome` in `work` and the totals, failing the engine on an error (lock held).
  void account(WorkState& work, const Outcome& outcome);
  // Completes everything queued and listening with the engine's failure (lock held).
  void fail_pending();
  bool unwinding() const { return std::uncaught_exceptions() > exceptions_at_construction_; }

  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<kernels::ops::SideStream> stream_;
  std::shared_ptr<EngineCore> core_;
  // Guarded by core_->mutex:
  std::deque<Pending> queue_;
  std::vector<std::shared_ptr<Listening>> listeners_;
  Totals totals_;
  std::string running_;  // the operation under way, or empty
  std::timed_mutex shared_;
  bool stopping_ = false;
  bool finished_ = false;  // the thread has left its loop
  const int exceptions_at_construction_ = std::uncaught_exceptions();
  std::thread thread_;
};

}  // namespace commsgd::comm
