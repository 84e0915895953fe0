#pragma once

#include <filesystem>
#include <string>

namespace commsgd::trainer {

// What happens to a rank on SIGTERM or SIGINT (mpirun ending the job after a peer died, scancel,
// Ctrl-C) and SIGUSR1 (Slurm's warning before the time limit, sbatch --signal). The signals are
// blocked in every thread and taken by one watcher thread, which can do what a signal handler
// cannot: mark rank 0's run row `failed` (`preempted` for SIGUSR1) in the database, on a
// connection of its own, before the process exits with 128 + the signal.
//
// Call install() first thing in main, before MPI starts threads of its own, so they inherit the
// blocked signals.
namespace termination {

void install();
// From here on, a signal marks this run failed (or preempted) in `database` (rank 0 only), or
// with a peer's failure that came first, and releases the database's writer claim before the
// process exits (writer_claim.hpp).
void record_run(const std::filesystem::path& database, const std::string& run_id);
// Marks the run failed with `reason` now, from any thread, on the connection opened ahead of time
// (the stall watchdog: the main thread is blocked); a later signal leaves the row as it is.
void record_failure(const std::string& reason);
// The run ended on its own (completed or failed): a late signal must not rewrite the row.
// Returns the signal taken before, if any (0 if none), whose mark on the row the caller replaces.
int forget_run();

// With checkpoints on, a signal also asks the training loop to stop at its next checkpoint: the
// watcher records the run as above (the loop may never get there, e.g. when a peer died), then
// gives the loop up to kStopGraceSeconds to checkpoint and return before it ends the process.
inline constexpr double kStopGraceSeconds = 25;  // Slurm sends SIGKILL 30 s after SIGTERM
void enable_stop_requests();
// The signal that asked the loop to stop, or 0.
int stop_requested();
// The loop ended, at a checkpoint or after its last iteration, and the process is on its way
// out: a signal taken now need not end it early.
void stopped();

}  // namespace termination
}  // namespace commsgd::trainer
