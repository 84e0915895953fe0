// From points to Slurm jobs: job arrays per (node count, network), as many as the cluster's
// MaxArraySize needs, each task one point, and a merge job that waits for them all. Commands are
// argument vectors, run without a shell, so no value from a sweep config is ever interpreted.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "jobs/sweep/sweep_config.hpp"
#include "trainer/options.hpp"

namespace commsgd::sweep {

// The programs and files the jobs run, as absolute paths (the jobs may start in another dir).
struct Tools {
  std::filesystem::path sweep;    // this program: array tasks ask it for their point
  std::filesystem::path trainer;  // commsgd-train
  std::filesystem::path report;   // commsgd-report, for the merge
  std::filesystem::path jobs;     // the jobs/ dir: templates and network profiles
};

// Where a sweep keeps its state: OUT/runs/<point id>.sqlite (one database per point),
// OUT/checkpoints/<point id>/ (a preempted point resumes from there), OUT/arrays/*.json (what
// each submitted array runs), OUT/logs/, OUT/merged.sqlite.
struct SweepOutput {
  std::filesystem::path dir;
  std::filesystem::path database(const Point& p) const { return dir / "runs" / (p.id + ".sqlite"); }
  std::filesystem::path checkpoints(const Point& p) const { return dir / "checkpoints" / p.id; }
  std::filesystem::path merged() const { return dir / "merged.sqlite"; }
};

struct ArrayJob {
  int nodes = 1;
  std::string network;
  std::vector<Point> points;       // task i runs points[i]
  std::filesystem::path manifest;  // the JSON file its tasks read their command from
  std::size_t part = 1;            // which of its (nodes, network)'s arrays, from 1
  std::size_t parts = 1;
};

// How `tasks` tasks are split so that no array has more than `most`: as few arrays as possible,
// their sizes differing by at most one (1,002 at 1,001 are 501 + 501, not 1,001 + 1), so that a
// group's arrays look alike in squeue and, each throttled with %N, finish at about one time.
std::vector<std::size_t> split_sizes(std::size_t tasks, std::size_t most);

// Groups the points still to run by (nodes, network), in a stable order, and splits each group
// into arrays of at most `max_array_size` tasks (Slurm's MaxArraySize: indices 0..size-1).
std::vector<ArrayJob> plan_arrays(const std::vector<Point>& pending, const SweepOutput& out,
                                  const std::string& stamp, std::size_t max_array_size);

// The data check of a sweep with check-data: one task per data set the pending points read, run
// with the command line of the first point that reads it.
struct CheckJob {
  std::vector<Point> points;       // task i checks points[i]'s data set
  std::filesystem::path manifest;  // the JSON file its tasks read their command from
};

// What --check-data reads for a point whose command line parsed to `options` (Point::data_set).
std::string data_set_read(const trainer::Options& options);

// The check of the pending points' data sets; no points when none reads files (all generated).
CheckJob plan_check(const std::vector<Point>& pending, const SweepOutput& out,
                    const std::string& stamp);

// sbatch's --array value: task indices 0..tasks-1, then "%N" when at most N may run at once.
std::string array_spec(std::size_t tasks, int max_running);

// The point's job step: srun's options, then commsgd-train and its arguments.
std::vector<std::string> step_arguments(const Point& p, const SweepOutput& out, const Tools& tools);

// The check task's job step: srun's options, then commsgd-train, the point's arguments and
// --check-data on all `cpus` cores of its node.
std::vector<std::string> check_step_arguments(const Point& p, const Tools& tools, int cpus);

void write_manifest(const ArrayJob& job, const SweepOutput& out, const Tools& tools);
void write_check_manifest(const CheckJob& job, const SweepConfig& c, const Tools& tools);
// Task `index` of a manifest written by write_manifest: its step arguments.
std::vector<std::string> read_manifest_task(const std::filesystem::path& manifest, long index);

// `after_check`: the check job the array waits for, which must succeed (afterok; Slurm cancels the
// array when it fails); empty for none.
std::vector<std::string> array_command(const SweepConfig& c, const ArrayJob& job,
                                       const SweepOutput& out, const Tools& tools,
                                       const std::string& after_check);
// The check job: one node, one task with the cores a node's ranks would have, no GPU.
std::vector<std::string> check_command(const SweepConfig& c, const CheckJob& job,
                                       const SweepOutput& out, const Tools& tools);
// `after`: the array job ids the merge waits for, every one of them (afterany: it merges
// whatever finished).
std::vector<std::string> merge_command(const SweepConfig& c, const SweepOutput& out,
                                       const Tools& tools, const std::vector<std::string>& after,
                                       bool wait);

// A word as a POSIX shell would need it quoted to read it back unchanged (for --dry-run).
std::string shell_quote(const std::string& word);

}  // namespace commsgd::sweep
