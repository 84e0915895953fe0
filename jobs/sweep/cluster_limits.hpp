// What the Slurm cluster accepts: the largest job array and the most jobs it holds at once, read
// from `scontrol show config` so that a sweep is planned to fit before anything is submitted.
#pragma once

#include <string>
#include <string_view>

namespace commsgd::sweep {

// One limit and where its value came from, for the plan's header line.
struct Limit {
  long value = 0;
  std::string from;
};

// Slurm's defaults (slurm.conf(5)), which many sites keep: array task indices 0..1000, and
// 10,000 jobs in slurmctld at once, where every task of an array counts as one job.
inline constexpr long kDefaultMaxArraySize = 1001;
inline constexpr long kDefaultMaxJobCount = 10000;

struct ClusterLimits {
  Limit max_array_size{kDefaultMaxArraySize, "Slurm's default"};
  Limit max_job_count{kDefaultMaxJobCount, "Slurm's default"};
};

// The two limits from `scontrol show config`'s output ("MaxArraySize            = 1001");
// a limit the text does not state keeps Slurm's default.
ClusterLimits parse_scontrol_config(std::string_view text);

// Asks the cluster with `scontrol show config`. Without scontrol, or when it cannot reach a
// controller (a dry run on a laptop), Slurm's defaults, saying so in `from`.
ClusterLimits read_cluster_limits();

}  // namespace commsgd::sweep
