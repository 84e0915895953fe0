#include "algorithms/comm/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace commsgd::comm {

using Clock = std::chrono::steady_clock;

// One WatchedWait, shared by the wait and the watchdog, so that the watchdog may finish a look at
// a wait that ends meanwhile.
struct WatchedEntry {
  std::function<void(const std::string&)> end;
  std::function<std::uint64_t()> progress;
  std::mutex mutex;   // held while the watchdog looks at the wait, and by the wait's destructor
  bool alive = true;  // guarded by mutex
  std::optional<std::string> ended;  // the limit it was ended at; guarded by mutex
  // The watchdog's own (its thread only, after registration):
  std::uint64_t seen = 0;
  Clock::time_point since = Clock::now();
};

namespace {

class Watchdog {
 public:
  // Never destroyed, and its thread never joined: a wait may end while the process's statics go.
  static Watchdog& instance() {
    static Watchdog* const watchdog = new Watchdog;
    return *watchdog;
  }

  void add(std::shared_ptr<WatchedEntry> entry) {
    const std::lock_guard lock(mutex_);
    entries_.push_back(std::move(entry));
    start();
  }

  void remove(const WatchedEntry* entry) {
    const std::lock_guard lock(mutex_);
    std::erase_if(entries_,
                  [&](const std::shared_ptr<WatchedEntry>& e) { return e.get() == entry; });
  }

  // `handler` empty: none. Waits for a call of the handler under way.
  void set_handler(StallHandler handler) {
    const std::lock_guard calling(handler_call_);
    const std::lock_guard lock(mutex_);
    if (handler_ && handler) throw std::logic_error("a stall handler is set already");
    handler_ = std::move(handler);
    reported_ = false;
    if (handler_) start();
  }

 private:
  void start() {  // lock held
    if (!started_) {
      started_ = true;
      std::thread([this] { loop(); }).detach();
    }
    changed_.notify_all();
  }

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return !entries_.empty() || handler_; });
      // Ten looks per limit, at least one a second: a wait ends within a tenth of the limit.
      const double every = std::clamp(wait_limit_seconds() / 10, 0.01, 1.0);
      changed_.wait_for(lock, std::chrono::duration<double>(every));
      const std::vector<std::shared_ptr<WatchedEntry>> entries = entries_;
      const bool report = handler_ && !reported_;
      lock.unlock();
      const double limit = wait_limit_seconds();
      look_at(entries, limit);
      if (report) report_stall(limit);
      lock.lock();
    }
  }

  static void look_at(const std::vector<std::shared_ptr<WatchedEntry>>& entries, double limit) {
    for (const std::shared_ptr<WatchedEntry>& e : entries) {
      const std::lock_guard lock(e->mutex);
      if (!e->alive || e->ended) continue;
      const Clock::time_point now = Clock::now();
      if (e->progress) {
        if (const std::uint64_t progress = e->progress(); progress != e->seen) {
          e->seen = progress;
          e->since = now;
        }
      }
      const std::chrono::duration<double> quiet = now - e->since;
      if (quiet.count() < limit + kSelfEndingGraceSeconds) continue;  // never, without a limit
      e->ended = wait_limit_text(limit);
      if (e->end) e->end(*e->ended);
    }
  }

  void report_stall(double limit) {
    const std::optional<LongestWait> wait = longest_wait();
    if (!wait || wait->seconds < limit) return;
    const std::lock_guard calling(handler_call_);
    StallHandler handler;
    {
      const std::lock_guard lock(mutex_);
      if (!handler_ || reported_) return;
      reported_ = true;
      handler = handler_;
    }
    handler(*wait, limit);
  }

  std::mutex handler_call_;  // held while the handler runs; taken before mutex_
  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  std::vector<std::shared_ptr<WatchedEntry>> entries_;
  StallHandler handler_;
  bool reported_ = false;  // the handler was called
  bool started_ = false;
};

}  // namespace

WatchedWait::WatchedWait() : WatchedWait(nullptr) {}

WatchedWait::WatchedWait(std::function<void(const std::string& limit)> end,
                         std::function<std::uint64_t()> progress)
    : entry_(std::make_shared<WatchedEntry>()) {
  entry_->end = std::move(end);
  entry_->progress = std::move(progress);
  if (entry_->progress) entry_->seen = entry_->progress();
  Watchdog::instance().add(entry_);
}

WatchedWait::~WatchedWait() {
  Watchdog::instance().remove(entry_.get());
  const std::lock_guard lock(entry_->mutex);  // a look under way ends first
  entry_->alive = false;
}

std::optional<std::string> WatchedWait::ended() const {
  const std::lock_guard lock(entry_->mutex);
  return entry_->ended;
}

StallReporting::StallReporting(StallHandler handler) {
  Watchdog::instance().set_handler(std::move(handler));
}

StallReporting::~StallReporting() {
  Watchdog::instance().set_handler(nullptr);
}

}  // namespace commsgd::comm
