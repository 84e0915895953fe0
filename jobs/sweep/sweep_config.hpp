// A sweep config (configs/sweeps/*.toml): a base commsgd-train config, the Slurm resources of
// each job, axes whose cross product is the set of runs ("points"), and settings every point gets
// ([train]) or every point of one algorithm ([algo.NAME]).
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace commsgd::sweep {

// A sweep config or command line that cannot be used: one line, exit code 2.
class SweepError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SlurmResources {
  int tasks_per_node = 1;  // one rank per GPU, or per core on CPU partitions
  int cpus_per_task = 1;
  int gpus_per_node = 0;
  std::string time;  // sbatch --time; empty: the partition's default
  std::string partition;
  std::string account;
  int max_running = 0;  // tasks of each array running at once (%N); 0: no limit
  // sbatch --exclusive: each task has its nodes to itself, so that no other task or job shares
  // them while it is timed. false for sweeps that only look at convergence.
  bool exclusive = true;
  std::vector<std::string> extra;  // further sbatch options, each one argument as written
};

// One axis: the values of one commsgd-train option (or of `workers` / `network`), each already
// turned into the command-line arguments it stands for.
struct Axis {
  std::string name;
  std::vector<std::string> labels;                  // the value as text, for ids and reports
  std::vector<std::vector<std::string>> arguments;  // e.g. {"--density=0.001"}; {} for a false flag
};

// A fixed setting: one commsgd-train option, turned into the command-line arguments it stands for.
struct Setting {
  std::string name;                    // e.g. "topology"
  std::vector<std::string> arguments;  // e.g. {"--topology=ring"}; {} for a false flag
};

struct SweepConfig {
  std::filesystem::path file;
  std::string name;
  std::filesystem::path base_config;  // absolute
  // Read every data set the points train on before any point starts (a job array of
  // commsgd-train --check-data that the points' arrays wait for): one bad file, and no point runs.
  bool check_data = false;
  SlurmResources slurm;
  std::vector<Axis> axes;  // sorted by name; `workers` and `network` among them
  // [train]: given to every point, on its command line (so an option its algorithm does not take
  // is refused). [algo.NAME]: given to the points whose algo axis is NAME, each in place of
  // [train]'s setting of the same option. Sorted by name; no option is both a setting and an axis.
  std::vector<Setting> train;
  std::map<std::string, std::vector<Setting>> per_algo;
};

// One run of the sweep: a choice of one value per axis.
struct Point {
  std::string id;  // readable and unique, used as its database file name
  int workers = 1;
  int nodes = 1;  // workers spread over nodes of tasks_per_node ranks
  std::string network;
  // --config BASE, one option per other axis, the settings of [train] and [algo.NAME], then
  // --threads (Slurm's cores per task) unless an axis or setting gives it
  std::vector<std::string> trainer_arguments;
  // The files --check-data reads for it, as text: the data set's kind, path and the options that
  // decide whether its files load (points with the same text read the same files); empty for a
  // generated data set. Left to whoever parses the point's command line (commsgd-sweep's check).
  std::string data_set;
};

SweepConfig read_sweep_config(const std::filesystem::path& file);

// The cross product of the axes, the first axis (by name) varying slowest.
std::vector<Point> expand(const SweepConfig& config);

// A sweep that asks Slurm for GPUs (slurm.gpus-per-node > 0) trains on them. `device` is the
// point's --device as commsgd-train reads its command line (an axis, else the base config, else
// the default, auto). A point that names no device on its command line and would run with auto
// gets --device=cuda: auto falls back to the CPU, silently, where commsgd-train was built without
// CUDA. cuda and cuda:N stay; any other device throws SweepError. Without GPUs, nothing changes.
// Returns the device the point runs with.
std::string train_on_requested_gpus(Point& point, const std::string& device,
                                    const SlurmResources& slurm);

}  // namespace commsgd::sweep
