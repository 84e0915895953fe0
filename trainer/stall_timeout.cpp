#include "trainer/stall_timeout.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace commsgd::trainer {

StallTimeout parse_stall_timeout(const std::string& text) {
  if (text == "auto") return {};
  if (text == "off") return {StallTimeout::Mode::off, 0};
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
  return {StallTimeout::Mode::fixed, value};
}

std::string to_string(const StallTimeout& timeout) {
  switch (timeout.mode) {
    case StallTimeout::Mode::automatic:
      return "auto";
    case StallTimeout::Mode::off:
      return "off";
    case StallTimeout::Mode::fixed:
      break;
  }
  return fmt::format("{}", timeout.seconds);
}

double automatic_stall_timeout(long steps_done, double slowest_step_seconds) {
  if (steps_done <= kWarmupSteps) return kCeilingSeconds;
  return std::clamp(kStepsOfSlack * slowest_step_seconds, kFloorSeconds, kCeilingSeconds);
}

}  // namespace commsgd::trainer
