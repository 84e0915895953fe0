#include "algorithms/comm/pending_waits.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace commsgd::comm {

// The process-wide list, oldest first: waits begin and end on any thread, in any order.
struct PendingWaits {
  std::mutex mutex;
  PendingWait* head = nullptr;
  PendingWait* tail = nullptr;

  static PendingWaits& instance() {
    static PendingWaits list;
    return list;
  }

  void add(PendingWait& w) {
    const std::lock_guard lock(mutex);
    w.since_ = PendingWait::Clock::now();
    w.previous_ = tail;
    (tail != nullptr ? tail->next_ : head) = &w;
    tail = &w;
  }

  void remove(PendingWait& w) {
    const std::lock_guard lock(mutex);
    (w.previous_ != nullptr ? w.previous_->next_ : head) = w.next_;
    (w.next_ != nullptr ? w.next_->previous_ : tail) = w.previous_;
  }

  std::optional<LongestWait> oldest() {
    const std::lock_guard lock(mutex);
    if (head == nullptr) return std::nullopt;
    const std::chrono::duration<double> waited = PendingWait::Clock::now() - head->since_;
    return LongestWait{head->operation_, head->peers(), waited.count()};
  }
};

PendingWait::PendingWait(const char* operation, int ranks) : operation_(operation), ranks_(ranks) {
  PendingWaits::instance().add(*this);
}

PendingWait::PendingWait(const char* operation, int ranks, int peer)
    : operation_(operation), ranks_(ranks), peer_(peer) {
  PendingWaits::instance().add(*this);
}

PendingWait::PendingWait(const char* operation, int ranks, std::span<const Outgoing> sends,
                         std::span<const Incoming> receives)
    : operation_(operation), ranks_(ranks), sends_(sends), receives_(receives) {
  PendingWaits::instance().add(*this);
}

PendingWait::~PendingWait() {
  PendingWaits::instance().remove(*this);
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
  return PendingWaits::instance().oldest();
}

}  // namespace commsgd::comm
