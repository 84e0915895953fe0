#include "algorithms/comm/pending_waits.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace commsgd::comm {

// The process-wide list, oldest first: waits begin and end on any thread, in any order.
struct PendingWaits {
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static PendingWait*& head() {
    static PendingWait* h = nullptr;
    return h;
  }
  static PendingWait*& tail() {
    static PendingWait* t = nullptr;
    return t;
  }

  static void add(PendingWait& w) {
    const std::lock_guard lock(mutex());
    w.since_ = PendingWait::Clock::now();
    w.previous_ = tail();
    (tail() != nullptr ? tail()->next_ : head()) = &w;
    tail() = &w;
  }

  static void remove(PendingWait& w) {
    const std::lock_guard lock(mutex());
    (w.previous_ != nullptr ? w.previous_->next_ : head()) = w.next_;
    (w.next_ != nullptr ? w.next_->previous_ : tail()) = w.previous_;
  }

  static std::optional<LongestWait> oldest() {
    const std::lock_guard lock(mutex());
    const PendingWait* w = head();
    if (w == nullptr) return std::nullopt;
    const std::chrono::duration<double> waited = PendingWait::Clock::now() - w->since_;
    return LongestWait{w->operation_, w->peers(), waited.count()};
  }
};

PendingWait::PendingWait(const char* operation, int ranks) : operation_(operation), ranks_(ranks) {
  PendingWaits::add(*this);
}

PendingWait::PendingWait(const char* operation, int ranks, int peer)
    : operation_(operation), ranks_(ranks), peer_(peer) {
  PendingWaits::add(*this);
}

PendingWait::PendingWait(const char* operation, int ranks, std::span<const Outgoing> sends,
                         std::span<const Incoming> receives)
    : operation_(operation), ranks_(ranks), sends_(sends), receives_(receives) {
  PendingWaits::add(*this);
}

PendingWait::~PendingWait() {
  PendingWaits::remove(*this);
}

std::string PendingWait::peers() const {
  if (peer_ == Communicator::kAnyPeer) return "any of " + std::to_string(ranks_) + " ranks";
  std::vector<int> peers;
  if (peer_) peers.push_back(*peer_);
  for (const Outgoing& m : sends_) peers.push_back(m.peer);
  for (const Incoming& m : receives_) peers.push_back(m.peer);
  if (peers.empty()) return "all " + std::to_string(ranks_) + " ranks";
  std::ranges::sort(peers);
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  std::string listed = peers.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < peers.size(); ++i) {
    listed += (i == 0 ? "" : ", ") + std::to_string(peers[i]);
  }
  return listed;
}

std::optional<LongestWait> longest_wait() {
  return PendingWaits::oldest();
}

}  // namespace commsgd::comm
