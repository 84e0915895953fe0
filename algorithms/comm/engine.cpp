#include "algorithms/comm/engine.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "algorithms/comm/watchdog.hpp"
#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::comm {
namespace {

// The pause before an idle listener, or an operation awaiting a message, probes again: it grows
// from 20 µs to 1 ms, so quick answers stay quick and an idle engine does not take a core from
// training.
class IdlePause {
 public:
  std::chrono::microseconds next() {
    const auto pause = pause_;
    pause_ = std::min(pause_ * 2, kLongest);
    return pause;
  }
  void reset() { pause_ = kFirst; }

 private:
  static constexpr auto kFirst = std::chrono::microseconds(20);
  static constexpr auto kLongest = std::chrono::microseconds(1000);
  std::chrono::microseconds pause_ = kFirst;
};
// How often a pause that waits for a section looks whether the watchdog ended it.
constexpr auto kPauseLookEvery = std::chrono::milliseconds(100);
// How long a failed engine's destructor lets the operation under way end before ending the job.
constexpr auto kGraceAfterFailure = std::chrono::seconds(2);
// The exit code of a job ended that way (trainer/exit_codes.hpp's kExitFailed).
constexpr int kExitFailed = 1;

void complete(WorkState& work, std::exception_ptr error = nullptr) {
  if (work.completed) return;
  if (error && !work.error) work.error = std::move(error);
  work.completed = true;
}

}  // namespace

void Channel::await_message(int peer) {
  IdlePause idle;
  while (!comm.probe(peer)) {
    {
      const std::lock_guard lock(engine.core_->mutex);
      if (engine.core_->failure) std::rethrow_exception(engine.core_->failure);
    }
    std::this_thread::sleep_for(idle.next());
  }
}

Engine::Engine(Communicator& comm)
    : comm_(comm.duplicate()), core_(std::make_shared<EngineCore>()) {
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  stop();
}

void Engine::stop() {
  if (!thread_.joinable()) return;
  std::unique_lock lock(core_->mutex);
  const bool failed = core_->failure || unwinding();
  if (failed) {
    core_->fail(std::make_exception_ptr(
        std::runtime_error("communication stopped: the rank failed elsewhere")));
  }
  stopping_ = true;
  if (failed) fail_pending();
  core_->changed.notify_all();
  if (failed && !core_->changed.wait_for(lock, kGraceAfterFailure, [&] { return finished_; })) {
    lock.unlock();
    comm_->abort(kExitFailed);
  }
  lock.unlock();
  thread_.join();
  if (failed) comm_->abort_device_backend();
}

Place Engine::place(Memory memory) {
  const std::lock_guard lock(core_->mutex);
  if (!stream_) stream_ = std::make_unique<kernels::ops::SideStream>(memory);
  if (stream_->place().memory != memory) {
    throw std::logic_error("a communication engine works in one kind of memory");
  }
  return stream_->place();
}

Work Engine::submit(std::string name,
                    const std::function<void(std::shared_ptr<WorkState>)>& queue) {
  auto work = std::make_shared<WorkState>(core_, std::move(name));
  {
    const std::lock_guard lock(core_->mutex);
    if (core_->failure) {
      complete(*work, core_->failure);
    } else {
      queue(work);
    }
  }
  core_->changed.notify_all();
  return Work(work);
}

Work Engine::start(std::string name, Operation operation, Place after) {
  if (after.memory != Memory::host) {
    auto ready = std::make_shared<kernels::ops::StreamPoint>(after.memory);
    ready->record(after);
    operation = [ready, follow = std::move(operation)](Channel& c) {
      ready->wait(c.place);
      follow(c);
    };
  }
  return submit(std::move(name), [&](std::shared_ptr<WorkState> work) {
    queue_.push_back({std::move(work), std::move(operation)});
  });
}

Work Engine::listen(std::string name, Listener listener) {
  return submit(std::move(name), [&](std::shared_ptr<WorkState> work) {
    listeners_.push_back(
        std::make_shared<Listening>(Listening{std::move(work), std::move(listener)}));
  });
}

Engine::Pause Engine::pause() {
  Pause pause(shared_, std::defer_lock);
  if (pause.try_lock()) return pause;
  const WatchedWait watched;
  // The lock is taken the moment the section ends; the look at ended() is what the interval is
  // for.
  while (!pause.try_lock_for(kPauseLookEvery)) {
    const std::optional<std::string> limit = watched.ended();
    if (!limit) continue;
    const std::lock_guard lock(core_->mutex);
    std::rethrow_exception(core_->fail(std::make_exception_ptr(
        std::runtime_error(running_ + ": held the state it shares for over " + *limit))));
  }
  return pause;
}

Engine::Totals Engine::totals() const {
  const std::lock_guard lock(core_->mutex);
  return totals_;
}

void Engine::loop() {
  std::unique_lock lock(core_->mutex);
  IdlePause idle;
  for (;;) {
    core_->changed.wait(lock, [&] { return stopping_ || !queue_.empty() || !listeners_.empty(); });
    if (core_->failure) fail_pending();
    if (!queue_.empty()) {
      run_next(lock);
      idle.reset();
      continue;
    }
    if (stopping_) break;
    if (poll_listeners(lock)) {
      idle.reset();
      continue;
    }
    core_->changed.wait_for(lock, idle.next(), [&] { return stopping_ || !queue_.empty(); });
  }
  // A listener still listening at the end is ended: nothing more will be probed.
  for (const auto& listening : listeners_) complete(*listening->work);
  listeners_.clear();
  finished_ = true;
  core_->changed.notify_all();
}

void Engine::run_next(std::unique_lock<std::mutex>& lock) {
  Pending next = std::move(queue_.front());
  queue_.pop_front();
  running_ = next.work->name;
  const Place place = stream_ ? stream_->place() : kHost;
  lock.unlock();
  const Outcome outcome = execute(place, [&](Channel& channel) {
    next.operation(channel);
    return true;
  });
  lock.lock();
  account(*next.work, outcome);
  complete(*next.work, outcome.error);
  running_.clear();
  core_->changed.notify_all();
}

bool Engine::poll_listeners(std::unique_lock<std::mutex>& lock) {
  running_ = "probing for messages";
  const std::vector<std::shared_ptr<Listening>> round = listeners_;
  const Place place = stream_ ? stream_->place() : kHost;
  lock.unlock();
  bool handled = false;
  for (const std::shared_ptr<Listening>& listening : round) {
    const Listener& listener = listening->listener;
    Outcome outcome;
    bool ended = false, measured = false;
    try {
      if (listener.done && listener.done()) {
        ended = true;
      } else if (const std::optional<int> from = comm_->probe(listener.peer())) {
        {
          const std::lock_guard named(core_->mutex);
          running_ = listening->work->name;
        }
        outcome =
            execute(place, [&](Channel& channel) { return listener.on_message(channel, *from); });
        measured = handled = true;
        ended = !outcome.result || outcome.error;
      }
    } catch (...) {
      outcome.error = std::current_exception();
      ended = true;
    }
    lock.lock();
    if (measured) account(*listening->work, outcome);
    if (outcome.error) core_->fail(outcome.error);
    if (ended) {
      complete(*listening->work, outcome.error);
      std::erase(listeners_, listening);
    }
    lock.unlock();
  }
  lock.lock();
  running_.clear();
  core_->changed.notify_all();
  return handled;
}

Engine::Outcome Engine::execute(Place place, const std::function<bool(Channel&)>& call) {
  Outcome outcome;
  // Only this thread moves the engine's communicator's counters.
  const algorithms::TrafficMeter traffic(*comm_);
  const algorithms::Stopwatch watch;
  try {
    if (place.memory != Memory::host) stream_->enter();
    Channel channel{*comm_, place, shared_, *this};
    outcome.result = call(channel);
  } catch (...) {
    outcome.error = std::current_exception();
  }
  outcome.seconds = watch.seconds();
  traffic.add_to(outcome.bytes_sent, outcome.bytes_received);
  return outcome;
}

void Engine::account(WorkState& work, const Outcome& outcome) {
  work.bytes_sent += outcome.bytes_sent;
  work.bytes_received += outcome.bytes_received;
  work.seconds += outcome.seconds;
  ++work.progress;
  totals_.bytes_sent += outcome.bytes_sent;
  totals_.bytes_received += outcome.bytes_received;
  totals_.seconds += outcome.seconds;
  if (outcome.error) core_->fail(outcome.error);
}

void Engine::fail_pending() {
  for (const Pending& pending : queue_) complete(*pending.work, core_->failure);
  queue_.clear();
  for (const auto& listening : listeners_) complete(*listening->work, core_->failure);
  listeners_.clear();
  core_->changed.notify_all();
}

}  // namespace commsgd::comm
