#include "algorithms/comm/work.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "algorithms/comm/watchdog.hpp"

namespace commsgd::comm {
namespace {

std::atomic<double> wait_limit{kDefaultWaitLimitSeconds};

}  // namespace

double wait_limit_seconds() {
  return wait_limit.load(std::memory_order_relaxed);
}

void set_wait_limit_seconds(double seconds) {
  if (!(seconds > 0)) throw std::invalid_argument("the wait limit must be > 0 s");
  wait_limit.store(seconds, std::memory_order_relaxed);
}

std::string wait_limit_text(double seconds) {
  if (std::isinf(seconds)) return "no limit (--comm-timeout off)";
  std::string text = std::to_string(seconds);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + " s (--comm-timeout)";
}

bool Work::completed() const {
  if (!state_) return true;
  const std::lock_guard lock(state_->core->mutex);
  return state_->completed;
}

void Work::wait() const {
  if (!state_ || completed()) return rethrow_error();
  EngineCore& core = *state_->core;
  const std::shared_ptr<WorkState> state = state_;
  // Registered before the core's lock is taken, and gone after it is released: the watchdog
  // takes its entry's lock, then the core's.
  const WatchedWait watched(
      [state](const std::string& limit) {
        const std::lock_guard lock(state->core->mutex);
        state->core->fail(
            std::make_exception_ptr(std::runtime_error(state->name + ": no progress in " + limit)));
      },
      [state] {
        const std::lock_guard lock(state->core->mutex);
        return state->progress;
      });
  {
    std::unique_lock lock(core.mutex);
    core.changed.wait(lock, [&] { return state_->completed || core.failure; });
    if (!state_->completed) std::rethrow_exception(core.failure);
  }
  rethrow_error();
}

void Work::rethrow_error() const {
  if (const std::exception_ptr e = error()) std::rethrow_exception(e);
}

std::exception_ptr Work::error() const {
  if (!state_) return nullptr;
  const std::lock_guard lock(state_->core->mutex);
  return state_->error;
}

std::uint64_t Work::bytes_sent() const {
  if (!state_) return 0;
  const std::lock_guard lock(state_->core->mutex);
  return state_->bytes_sent;
}

std::uint64_t Work::bytes_received() const {
  if (!state_) return 0;
  const std::lock_guard lock(state_->core->mutex);
  return state_->bytes_received;
}

double Work::seconds() const {
  if (!state_) return 0;
  const std::lock_guard lock(state_->core->mutex);
  return state_->seconds;
}

// The process-wide list of waits, oldest first: waits begin and end on any thread, in any order.
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
