#include "jobs/sweep/jobs_plan.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "trainer/data/dataset.hpp"

namespace commsgd::sweep {
namespace {

namespace fs = std::filesystem;

// Resources every job of the sweep asks for, as set in [slurm].
void add_resources(std::vector<std::string>& cmd, const SlurmResources& r) {
  if (!r.time.empty()) cmd.push_back("--time=" + r.time);
  if (!r.partition.empty()) cmd.push_back("--partition=" + r.partition);
  if (!r.account.empty()) cmd.push_back("--account=" + r.account);
  cmd.insert(cmd.end(), r.extra.begin(), r.extra.end());
}

// A manifest: `head`'s fields and one task per point, its step made by `step`.
template <typename Step>
void write_tasks(const fs::path& manifest, nlohmann::json head, const std::vector<Point>& points,
                 Step step) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const Point& p : points) {
    tasks.push_back({{"point", p.id}, {"workers", p.workers}, {"step", step(p)}});
  }
  head["tasks"] = std::move(tasks);
  fs::create_directories(manifest.parent_path());
  std::ofstream file(manifest);
  file << head.dump(2) << '\n';
  if (!file.flush()) throw SweepError(fmt::format("{}: cannot write", manifest.string()));
}

// The cores of one node that a point's ranks share: what the check task may decode with.
int node_cpus(const SlurmResources& r) {
  return r.tasks_per_node * r.cpus_per_task;
}

}  // namespace

std::vector<std::size_t> split_sizes(std::size_t tasks, std::size_t most) {
  if (most == 0) throw SweepError("an array must be allowed at least one task");
  const std::size_t arrays = (tasks + most - 1) / most;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < arrays; ++i) sizes.push_back(tasks / arrays + (i < tasks % arrays));
  return sizes;
}

std::vector<ArrayJob> plan_arrays(const std::vector<Point>& pending, const SweepOutput& out,
                                  const std::string& stamp, std::size_t max_array_size) {
  std::map<std::pair<int, std::string>, std::vector<Point>> groups;
  for (const Point& p : pending) groups[{p.nodes, p.network}].push_back(p);
  std::vector<ArrayJob> jobs;
  for (auto& [key, points] : groups) {
    const std::vector<std::size_t> sizes = split_sizes(points.size(), max_array_size);
    auto next = points.begin();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      ArrayJob job{.nodes = key.first,
                   .network = key.second,
                   .points = {next, next + static_cast<std::ptrdiff_t>(sizes[i])},
                   .manifest = out.dir / "arrays" / fmt::format("{}-{}.json", stamp, jobs.size()),
                   .part = i + 1,
                   .parts = sizes.size()};
      next += static_cast<std::ptrdiff_t>(sizes[i]);
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

std::string data_set_read(const trainer::Options& options) {
  const data::DatasetOptions d = trainer::dataset_options(options);
  if (!data::dataset_table().find(d.kind).from_path) return {};
  std::string text = fmt::format("{} {} val-fraction {} val-split {}", d.kind, d.path,
                                 d.val_fraction, static_cast<int>(d.val_split));
  if (const auto& shape = d.csv_shape) {
    text += fmt::format(" csv-shape {},{},{}", shape->channels, shape->height, shape->width);
  }
  return text;
}

CheckJob plan_check(const std::vector<Point>& pending, const SweepOutput& out,
                    const std::string& stamp) {
  CheckJob job{.points = {}, .manifest = out.dir / "arrays" / fmt::format("{}-check.json", stamp)};
  std::set<std::string> seen;
  for (const Point& p : pending) {
    if (!p.data_set.empty() && seen.insert(p.data_set).second) job.points.push_back(p);
  }
  return job;
}

std::string array_spec(std::size_t tasks, int max_running) {
  std::string spec = fmt::format("0-{}", tasks - 1);
  if (max_running > 0) spec += fmt::format("%{}", max_running);
  return spec;
}

std::vector<std::string> step_arguments(const Point& p, const SweepOutput& out,
                                        const Tools& tools) {
  std::vector<std::string> args = {fmt::format("--ntasks={}", p.workers), tools.trainer.string()};
  args.insert(args.end(), p.trainer_arguments.begin(), p.trainer_arguments.end());
  args.push_back("--db=" + out.database(p).string());
  // A task stopped before the time limit, or preempted, continues where it stopped when Slurm
  // requeues it or the sweep is submitted again.
  args.push_back("--checkpoint-dir=" + out.checkpoints(p).string());
  args.push_back("--resume=auto");
  return args;
}

std::vector<std::string> check_step_arguments(const Point& p, const Tools& tools, int cpus) {
  std::vector<std::string> args = {"--ntasks=1", fmt::format("--cpus-per-task={}", cpus),
                                   tools.trainer.string()};
  args.insert(args.end(), p.trainer_arguments.begin(), p.trainer_arguments.end());
  args.push_back("--check-data");
  return args;
}

void write_manifest(const ArrayJob& job, const SweepOutput& out, const Tools& tools) {
  write_tasks(job.manifest, {{"nodes", job.nodes}, {"network", job.network}}, job.points,
              [&](const Point& p) { return step_arguments(p, out, tools); });
}

void write_check_manifest(const CheckJob& job, const SweepConfig& c, const Tools& tools) {
  write_tasks(job.manifest, {{"job", "data check"}}, job.points,
              [&](const Point& p) { return check_step_arguments(p, tools, node_cpus(c.slurm)); });
}

std::vector<std::string> read_manifest_task(const fs::path& manifest, long index) {
  std::ifstream file(manifest);
  if (!file) throw SweepError(fmt::format("{}: cannot read", manifest.string()));
  try {
    const nlohmann::json tasks = nlohmann::json::parse(file).at("tasks");
    if (index < 0 || static_cast<std::size_t>(index) >= tasks.size()) {
      throw SweepError(
          fmt::format("{}: no task {} (it has {})", manifest.string(), index, tasks.size()));
    }
    return tasks[static_cast<std::size_t>(index)].at("step").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw SweepError(fmt::format("{}: not a sweep manifest: {}", manifest.string(), e.what()));
  }
}

std::vector<std::string> array_command(const SweepConfig& c, const ArrayJob& job,
                                       const SweepOutput& out, const Tools& tools,
                                       const std::string& after_check) {
  const SlurmResources& r = c.slurm;
  std::vector<std::string> cmd = {"sbatch",
                                  "--parsable",
                                  fmt::format("--job-name={}", c.name),
                                  "--array=" + array_spec(job.points.size(), r.max_running),
                                  fmt::format("--nodes={}", job.nodes),
                                  fmt::format("--ntasks-per-node={}", r.tasks_per_node),
                                  fmt::format("--cpus-per-task={}", r.cpus_per_task),
                                  "--output=" + (out.dir / "logs" / "%A_%a.out").string()};
  if (r.gpus_per_node > 0) cmd.push_back(fmt::format("--gpus-per-node={}", r.gpus_per_node));
  if (r.exclusive) cmd.push_back("--exclusive");
  if (!after_check.empty()) {
    cmd.insert(cmd.end(), {"--dependency=afterok:" + after_check, "--kill-on-invalid-dep=yes"});
  }
  add_resources(cmd, r);
  cmd.insert(cmd.end(), {(tools.jobs / "templates" / "sweep-point.sbatch").string(),
                         tools.sweep.string(), job.manifest.string(), job.network,
                         (tools.jobs / "network" / "profile.sh").string()});
  return cmd;
}

std::vector<std::string> check_command(const SweepConfig& c, const CheckJob& job,
                                       const SweepOutput& out, const Tools& tools) {
  std::vector<std::string> cmd = {"sbatch",
                                  "--parsable",
                                  fmt::format("--job-name={}-check", c.name),
                                  "--array=" + array_spec(job.points.size(), 0),
                                  "--nodes=1",
                                  "--ntasks=1",
                                  fmt::format("--cpus-per-task={}", node_cpus(c.slurm)),
                                  "--output=" + (out.dir / "logs" / "check_%A_%a.out").string()};
  add_resources(cmd, c.slurm);
  cmd.insert(cmd.end(), {(tools.jobs / "templates" / "sweep-check.sbatch").string(),
                         tools.sweep.string(), job.manifest.string()});
  return cmd;
}

std::vector<std::string> merge_command(const SweepConfig& c, const SweepOutput& out,
                                       const Tools& tools, const std::vector<std::string>& after,
                                       bool wait) {
  std::string dependency = "--dependency=afterany";
  for (const std::string& id : after) dependency += ":" + id;
  std::vector<std::string> cmd = {"sbatch",
                                  "--parsable",
                                  fmt::format("--job-name={}-merge", c.name),
                                  dependency,
                                  "--nodes=1",
                                  "--ntasks=1",
                                  "--output=" + (out.dir / "logs" / "merge_%j.out").string()};
  if (wait) cmd.push_back("--wait");
  add_resources(cmd, c.slurm);
  cmd.insert(cmd.end(),
             {(tools.jobs / "templates" / "sweep-merge.sbatch").string(), tools.report.string(),
              out.merged().string(), (out.dir / "runs").string()});
  return cmd;
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_./:=,%@+-") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace commsgd::sweep
