#include "trainer/termination.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "algorithms/comm/work.hpp"
#include "analysis/record/peer_failures.hpp"
#include "analysis/record/run_database.hpp"
#include "analysis/record/writer_claim.hpp"
#include "trainer/exit_codes.hpp"

namespace commsgd::trainer::termination {
namespace {

std::mutex mutex;  // guards the run to record, shared by the main and the watcher thread
std::atomic<bool> stop_requests_enabled = false;
std::atomic<int> requested_stop = 0;
std::atomic<int> taken_signal = 0;
bool loop_stopped = false;  // guarded by mutex
std::condition_variable loop_stopped_changed;
// A connection of its own, opened ahead of time: when the signal comes, mpirun's SIGKILL follows
// within seconds, and one UPDATE is all there is time for.
std::optional<record::RunDatabase> run_database;
std::filesystem::path run_database_file;
std::string run_id;

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  return set;
}

void watch() {
  const sigset_t set = watched_signals();
  int signal = 0;
  sigwait(&set, &signal);
  taken_signal = signal;
  // SIGUSR1 is what the job templates ask Slurm to send ahead of the time limit (--signal):
  // the run was stopped from outside, not broken.
  const bool time_limit = signal == SIGUSR1;
  const record::RunStatus status =
      time_limit ? record::RunStatus::preempted : record::RunStatus::failed;
  std::string reason =
      time_limit ? "stopped by SIGUSR1 (the Slurm job reached its time limit or was preempted)"
                 : fmt::format(
                       "terminated by SIG{} (the job was cancelled, or a peer rank or host "
                       "failed)",
                       sigabbrev_np(signal));
  // A launcher that lost a host ends the job before the stall watchdog may fire: say what this
  // rank was waiting for, and since when.
  if (const auto wait = comm::longest_wait(); wait && wait->seconds >= 1) {
    reason += fmt::format(" while it waited {:.0f} s in {} for {}", wait->seconds, wait->operation,
                          wait->peers);
  }
  {
    const std::lock_guard lock(mutex);
    if (run_database) {
      try {
        run_database->finish_run(run_id, status, reason);
        record::fold_peer_failures(*run_database, run_database_file, run_id);
      } catch (const std::exception& e) {
        fmt::print(stderr, "commsgd-train: warning: could not mark run {} {}: {}\n", run_id,
                   record::to_string(status), e.what());
      }
    }
  }
  if (stop_requests_enabled) {
    requested_stop = signal;
    std::unique_lock lock(mutex);
    const auto grace = std::chrono::duration<double>(kStopGraceSeconds);
    if (loop_stopped_changed.wait_for(lock, grace, [] { return loop_stopped; })) return;
  }
  {
    const std::lock_guard lock(mutex);
    if (!run_database_file.empty()) record::release_writer_claim(run_database_file);
  }
  _exit(kExitSignalBase + signal);
}

}  // namespace

void install() {
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(watch).detach();
}

void record_run(const std::filesystem::path& database, const std::string& id) {
  const std::lock_guard lock(mutex);
  run_database.emplace(database);
  run_database_file = database;
  run_id = id;
}

void enable_stop_requests() {
  stop_requests_enabled = true;
}

int stop_requested() {
  return requested_stop;
}

void stopped() {
  {
    const std::lock_guard lock(mutex);
    loop_stopped = true;
  }
  loop_stopped_changed.notify_all();
}

void record_failure(const std::string& reason) {
  const std::lock_guard lock(mutex);
  if (!run_database) return;
  try {
    run_database->finish_run(run_id, record::RunStatus::failed, reason);
    record::fold_peer_failures(*run_database, run_database_file, run_id);
  } catch (const std::exception& e) {
    fmt::print(stderr, "commsgd-train: warning: could not mark run {} failed: {}\n", run_id,
               e.what());
  }
  run_database.reset();
}

int forget_run() {
  const std::lock_guard lock(mutex);
  run_database.reset();
  run_id.clear();
  return taken_signal;
}

}  // namespace commsgd::trainer::termination
