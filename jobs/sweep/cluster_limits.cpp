#include "jobs/sweep/cluster_limits.hpp"

#include <algorithm>
#include <charconv>

#include "jobs/sweep/command_output.hpp"
#include "jobs/sweep/sweep_config.hpp"

namespace commsgd::sweep {
namespace {

// "KEY = VALUE" with any spaces around '='; false for another key or a value that is no number.
bool read_setting(std::string_view line, std::string_view key, long& value) {
  if (!line.starts_with(key)) return false;
  line.remove_prefix(key.size());
  const std::size_t equals = line.find_first_not_of(' ');
  if (equals == std::string_view::npos || line[equals] != '=') return false;
  line.remove_prefix(equals + 1);
  line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
  long parsed = 0;
  const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), parsed);
  if (error != std::errc{} || (end != line.data() + line.size() && *end != ' ')) return false;
  value = parsed;
  return true;
}

}  // namespace

ClusterLimits parse_scontrol_config(std::string_view text) {
  ClusterLimits limits;
  const std::string from = "scontrol show config";
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (read_setting(line, "MaxArraySize", limits.max_array_size.value)) {
      limits.max_array_size.from = from;
    } else if (read_setting(line, "MaxJobCount", limits.max_job_count.value)) {
      limits.max_job_count.from = from;
    }
  }
  return limits;
}

ClusterLimits read_cluster_limits() {
  std::string why;
  try {
    const CommandResult r = run_command({"scontrol", "show", "config"});
    if (r.exit_code == 0) return parse_scontrol_config(r.output);
    why = "scontrol show config failed";
  } catch (const SweepError&) {
    why = "no scontrol";
  }
  ClusterLimits limits;
  limits.max_array_size.from = limits.max_job_count.from = "Slurm's default, " + why;
  return limits;
}

}  // namespace commsgd::sweep
