// From points to Slurm jobs: one job array per (node count, network), each task one point, and
// a merge job that waits for them all. Commands are argument vectors, run without a shell, so no
// value from a sweep config is ever interpreted by one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "jobs/sweep/sweep_config.hpp"

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
  std::vector<Point> points;
  std::filesystem::path manifest;  // the JSON file its tasks read their command from
};

// Groups the points still to run into arrays, in a stable order (nodes, then network).
std::vector<ArrayJob> plan_arrays(const std::vector<Point>& pending, const SweepOutput& out,
                                  const std::string& stamp);

// The point's job step: srun's options, then commsgd-train and its arguments.
std::vector<std::string> step_arguments(const Point& p, const SweepOutput& out, const Tools& tools);

void write_manifest(const ArrayJob& job, const SweepOutput& out, const Tools& tools);
// Task `index` of a manifest written by write_manifest: its step arguments.
std::vector<std::string> read_manifest_task(const std::filesystem::path& manifest, long index);

std::vector<std::string> array_command(const SweepConfig& c, const ArrayJob& job,
                                       const SweepOutput& out, const Tools& tools);
// `after`: the array job ids the merge waits for (afterany: it merges whatever finished).
std::vector<std::string> merge_command(const SweepConfig& c, const SweepOutput& out,
                                       const Tools& tools, const std::string& after, bool wait);

// A word as a POSIX shell would need it quoted to read it back unchanged (for --dry-run).
std::string shell_quote(const std::string& word);

}  // namespace commsgd::sweep
