#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/comm/watchdog.hpp"
#include "algorithms/comm/work.hpp"
#include "trainer/comm_timeout.hpp"

namespace commsgd::trainer {

// The stall policy of one rank. It keeps the process's wait limit (comm/work.hpp) at what
// --comm-timeout says now: fixed, off (no limit), or automatic, following the step time; the
// communication watchdog (comm/watchdog.hpp) holds every wait to that one limit, the engine's and
// the NCCL back end's included. And it is that watchdog's stall handler: what happens when a
// blocking wait on peers (comm::PendingWait, registered by every blocking communicator call on
// any thread), which cannot end itself, has lasted the limit. Local work never counts, so loading
// data, a long forward pass, evaluating or writing a checkpoint cannot look like a stall; a peer
// that is gone, unreachable or hung leaves every rank that needs it in a wait that does not end.
// The handler, once:
//  1. records the run `failed`, naming the operation and the peers (`record`), and prints it as
//     one line;
//  2. gives the launcher kLauncherGraceSeconds to end the job itself: when a host is unreachable,
//     mpirun only exits once its keepalive declares that host's daemon lost (jobs/local/launch.sh
//     sets it), and an abort sent to that daemon first would keep mpirun waiting for the TCP
//     retransmission timeout (about 15 minutes);
//  3. ends the job: MPI_Abort with kExitStalled, and _exit(kExitStalled) if that has not ended
//     this process within kAbortSeconds (an abort may block on an unreachable peer too).
class StallWatchdog {
 public:
  static constexpr double kLauncherGraceSeconds = 30;
  static constexpr double kAbortSeconds = 10;

  // `record(reason)` runs on the communication watchdog's thread; it must not throw.
  StallWatchdog(CommTimeout timeout, comm::Communicator& comm,
                std::function<void(const std::string&)> record);
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // One training step done, in `seconds`: the automatic limit follows the step time.
  void step_done(double seconds);

  // While one lives, a wait may last the ceiling whatever the timeout: every rank writes its
  // checkpoint file, and the fast ones wait in the barrier for the slowest, whose write is
  // making progress the others cannot see.
  class PeersWriting {
   public:
    explicit PeersWriting(StallWatchdog& watchdog);
    ~PeersWriting();
    PeersWriting(const PeersWriting&) = delete;
    PeersWriting& operator=(const PeersWriting&) = delete;

   private:
    StallWatchdog& watchdog_;
  };

 private:
  // Sets the wait limit from the timeout and what was seen so far (lock held).
  void publish_limit() const;
  void end_job(const comm::LongestWait& wait, double limit);

  const CommTimeout timeout_;
  comm::Communicator& comm_;
  const std::function<void(const std::string&)> record_;
  std::mutex mutex_;
  long steps_done_ = 0;      // guarded by mutex_
  double slowest_step_ = 0;  // guarded by mutex_; since the warm-up
  int peers_writing_ = 0;    // guarded by mutex_
  std::optional<comm::StallReporting> reporting_;  // last: set once the rest is
};

}  // namespace commsgd::trainer
