#pragma once

#include <string>

namespace commsgd::trainer {

// --stall-timeout: how long one wait on peers may last before the job is ended.
struct StallTimeout {
  enum class Mode { automatic, fixed, off };
  Mode mode = Mode::automatic;
  double seconds = 0;  // Mode::fixed only
};
// "auto", "off" or a number of seconds > 0; throws std::invalid_argument naming the problem.
StallTimeout parse_stall_timeout(const std::string& text);
std::string to_string(const StallTimeout& timeout);

// The automatic timeout's bounds and rule: until kWarmupSteps steps are done (the first steps
// are slow: allocation, connection set-up, caches) the ceiling; then kStepsOfSlack times the
// slowest step since, within [kFloorSeconds, kCeilingSeconds]. The floor covers what a peer may
// do between two waits besides steps: evaluate, write the database, log.
inline constexpr long kWarmupSteps = 10;
inline constexpr double kStepsOfSlack = 30;
inline constexpr double kFloorSeconds = 60;
inline constexpr double kCeilingSeconds = 600;
double automatic_stall_timeout(long steps_done, double slowest_step_seconds);

}  // namespace commsgd::trainer
