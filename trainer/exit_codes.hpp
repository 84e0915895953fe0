#pragma once

// commsgd-train's exit codes, for the job scripts that act on them (README, "Exit codes").
namespace commsgd::trainer {

inline constexpr int kExitCompleted = 0;
// Failed during training; the run row says `failed` with the error.
inline constexpr int kExitFailed = 1;
// Bad input: one line names the problem; nothing trained, no run row.
inline constexpr int kExitBadInput = 2;
// A wait on peers lasted --comm-timeout (stall_watchdog.hpp): a lost host or link, or a peer
// that hangs. The run row says `failed`, naming the operation and the peers.
inline constexpr int kExitStalled = 3;
// Stopped by signal N: 128 + N (termination.hpp).
inline constexpr int kExitSignalBase = 128;

}  // namespace commsgd::trainer
