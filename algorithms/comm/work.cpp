#include "algorithms/comm/work.hpp"

#include <chrono>
#include <stdexcept>

namespace commsgd::comm {

std::string timeout_text(double seconds) {
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
  if (!state_) return;
  EngineCore& core = *state_->core;
  std::unique_lock lock(core.mutex);
  const auto timeout = std::chrono::duration<double>(core.timeout_seconds);
  while (!state_->completed) {
    const std::uint64_t seen = state_->progress;
    if (!core.changed.wait_for(lock, timeout,
                               [&] { return state_->completed || state_->progress != seen; })) {
      const auto deadline = std::make_exception_ptr(std::runtime_error(
          state_->name + ": no progress in " + timeout_text(core.timeout_seconds)));
      if (!core.failure) core.failure = deadline;
      core.changed.notify_all();
      std::rethrow_exception(deadline);
    }
  }
  if (state_->error) std::rethrow_exception(state_->error);
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

}  // namespace commsgd::comm
