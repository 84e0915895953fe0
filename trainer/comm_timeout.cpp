#include "trainer/comm_timeout.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace commsgd::trainer {

CommTimeout parse_comm_timeout(const std::string& text) {
  if (text == "auto") return {};
  if (text == "off") return {CommTimeout::Mode::off, 0};
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value) || value <= 0) {
    throw std::invalid_argument("'" + text + "': expected auto, off or a number of seconds > 0");
  }
  return {CommTimeout::Mode::fixed, value};
}

std::string to_string(const CommTimeout& timeout) {
  switch (timeout.mode) {
    case CommTimeout::Mode::automatic:
      return "auto";
    case CommTimeout::Mode::off:
      return "off";
    case CommTimeout::Mode::fixed:
      break;
  }
  return fmt::format("{}", timeout.seconds);
}

double automatic_comm_timeout(long steps_done, double slowest_step_seconds) {
  if (steps_done <= kWarmupSteps) return kCeilingSeconds;
  return std::clamp(kStepsOfSlack * slowest_step_seconds, kFloorSeconds, kCeilingSeconds);
}

double wait_limit_for(const CommTimeout& timeout, long steps_done, double slowest_step_seconds,
                      bool peers_writing) {
  double limit = std::numeric_limits<double>::infinity();
  if (timeout.mode == CommTimeout::Mode::fixed) limit = timeout.seconds;
  if (timeout.mode == CommTimeout::Mode::automatic) {
    limit = automatic_comm_timeout(steps_done, slowest_step_seconds);
  }
  return peers_writing ? std::max(limit, kCeilingSeconds) : limit;
}

}  // namespace commsgd::trainer
