#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

namespace commsgd::comm {

// What an Engine and the Works it handed out share: one lock, one signal, the deadline and the
// engine's failure. Held by both, so a Work may outlive its engine.
struct EngineCore {
  explicit EngineCore(double timeout) : timeout_seconds(timeout) {}
  std::mutex mutex;
  std::condition_variable changed;
  const double timeout_seconds;
  std::exception_ptr failure;  // the first error; sticky
};

// "N s (--comm-timeout)", N as short as it is exact: how a deadline names itself.
std::string timeout_text(double seconds);

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
  // Blocks until the operation completed and throws its error, if it had one. Throws
  // std::runtime_error, failing the engine, once it has seen no progress for the engine's timeout
  // (a listener progresses with every message it handles).
  void wait() const;
  // Once completed: its error (null if none), the bytes it sent and received and its seconds on
  // the engine's thread.
  std::exception_ptr error() const;
  std::uint64_t bytes_sent() const;
  std::uint64_t bytes_received() const;
  double seconds() const;

 private:
  std::shared_ptr<WorkState> state_;
};

}  // namespace commsgd::comm
