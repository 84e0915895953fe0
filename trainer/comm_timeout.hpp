#pragma once

#include <string>

namespace commsgd::trainer {

// --comm-timeout: how long one wait on peers may go without progress before the run fails. The
// stall watchdog turns it into the wait limit every wait reads (comm/work.hpp).
struct CommTimeout {
  enum class Mode { automatic, fixed, off };
  Mode mode = Mode::automatic;
  double seconds = 0;  // Mode::fixed only
};
// "auto", "off" or a number of seconds > 0; throws std::invalid_argument naming the problem.
CommTimeout parse_comm_timeout(const std::string& text);
std::string to_string(const CommTimeout& timeout);

// The automatic timeout's bounds and rule: until kWarmupSteps steps are done (the first steps
// are slow: allocation, connection set-up, caches) the ceiling; then kStepsOfSlack times the
// slowest step since, within [kFloorSeconds, kCeilingSeconds]. The floor covers what a peer may
// do between two waits besides steps: evaluate, write the database, log.
inline constexpr long kWarmupSteps = 10;
inline constexpr double kStepsOfSlack = 30;
inline constexpr double kFloorSeconds = 60;
inline constexpr double kCeilingSeconds = 600;
double automatic_comm_timeout(long steps_done, double slowest_step_seconds);

// The wait limit `timeout` sets now (comm/work.hpp): its seconds, infinity when off, the automatic
// rule's; while peers write a checkpoint, at least the ceiling.
double wait_limit_for(const CommTimeout& timeout, long steps_done, double slowest_step_seconds,
                      bool peers_writing);

}  // namespace commsgd::trainer
