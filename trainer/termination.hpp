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
// From here on, a signal marks this run failed (or preempted) in `database` (rank 0 only).
void record_run(const std::filesystem::path& database, const std::string& run_id);
// The run ended on its own (completed or failed): a late signal must not rewrite the row.
void forget_run();

}  // namespace termination
}  // namespace commsgd::trainer
