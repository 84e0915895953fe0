#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::comm {

// The waits on peers that are under way in this process, right now. Every blocking call of
// Communicator registers one for its duration, on whichever thread makes it, so that a watchdog
// (trainer/stall_watchdog.hpp) can tell a rank blocked on its peers from one doing local work
// (loading data, computing, writing a checkpoint), and can name the operation and the peers.
// Registering costs a mutex and no allocation.
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
