// commsgd-sweep: runs the cross product of a sweep config as Slurm job arrays, one database per
// run, skipping runs already completed, and merges the results when the arrays are done.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <set>

#include "common/installed_paths.hpp"
#include "jobs/sweep/cluster_limits.hpp"
#include "jobs/sweep/command_output.hpp"
#include "jobs/sweep/jobs_plan.hpp"
#include "jobs/sweep/run_state.hpp"
#include "jobs/sweep/sweep_config.hpp"
#include "trainer/options.hpp"

namespace commsgd::sweep {
namespace {

namespace fs = std::filesystem;

const char* const kDescription =
    "commsgd-sweep: run every combination of a sweep config's axes with commsgd-train on Slurm.\n"
    "Job arrays per node count and network (each task one run, launched with\n"
    "`srun --mpi=pmix` under the network's profile), as many as the cluster's MaxArraySize\n"
    "needs, every run writing OUT/runs/<point>.sqlite, and a last job, started when the arrays\n"
    "end, merging them into OUT/merged.sqlite.\n"
    "Submitting again runs only the points without a completed run.";

struct Settings {
  fs::path sweep_file;
  fs::path output;
  bool dry_run = false;
  bool wait = false;
  Tools tools{.sweep = {},
              .trainer = sibling_program("commsgd-train", COMMSGD_DEFAULT_TRAINER),
              .report = sibling_program("commsgd-report", COMMSGD_DEFAULT_REPORT),
              .jobs = shipped_file("jobs", COMMSGD_JOBS_DIR)};
  // -1: not given. --max-running overrides the sweep config's slurm.max-running; the limits
  // override what `scontrol show config` says (e.g. to plan for another cluster in a dry run).
  int max_running = -1;
  long max_array_size = -1;
  long max_job_count = -1;
  fs::path manifest;
  long task = -1;
};

struct Sweep {
  SweepConfig config;
  SweepOutput out;
  std::vector<Point> points;
  std::set<std::string> devices;  // the --device values its points run with
};

// Every point must be a command line commsgd-train accepts, or none is submitted; on GPUs it
// must train on them (train_on_requested_gpus). Returns the devices the points run with.
std::set<std::string> check_points(std::vector<Point>& points, const SlurmResources& slurm) {
  std::set<std::string> devices;
  for (Point& p : points) {
    std::vector<const char*> argv = {"commsgd-train"};
    for (const std::string& a : p.trainer_arguments) argv.push_back(a.c_str());
    trainer::Options options;
    try {
      trainer::parse_options(static_cast<int>(argv.size()), argv.data(), options, false);
    } catch (const trainer::UsageError& e) {
      throw SweepError(fmt::format("point {}: {}", p.id, e.what()));
    }
    // The --device=cuda it may add needs no second parse: only a point that names no device gets
    // it, and commsgd-train accepts cuda on any command line it accepted.
    devices.insert(train_on_requested_gpus(p, options.device, slurm));
    p.data_set = data_set_read(options);
  }
  return devices;
}

Sweep load(const Settings& s) {
  Sweep sweep;
  sweep.config = read_sweep_config(s.sweep_file);
  sweep.out.dir =
      fs::absolute(s.output.empty() ? fs::path("sweeps") / sweep.config.name : s.output);
  sweep.points = expand(sweep.config);
  sweep.devices = check_points(sweep.points, sweep.config.slurm);
  return sweep;
}

fs::path absolute_existing(const fs::path& path, const std::string& what) {
  if (path.empty() || !fs::exists(path)) {
    throw SweepError(fmt::format("{} not found{}; set it with --{}", what,
                                 path.empty() ? "" : ": " + path.string(), what));
  }
  return fs::canonical(path);
}

std::string utc_stamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z-{}", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, getpid());
}

std::string quoted(const std::vector<std::string>& cmd) {
  std::string line;
  for (const std::string& word : cmd) line += (line.empty() ? "" : " ") + shell_quote(word);
  return line;
}

// The words a dry run writes where a job id goes, then replaces by a shell variable.
const std::string kCheckIdWord = "CHECK_JOB_ID";
const std::string kArrayIdsWord = "ARRAY_JOB_IDS";

// A dry run's line with `placeholder` (a plain word, left unquoted) replaced by shell variables:
// quoting them would keep the shell from expanding the ids they hold.
std::string expand_placeholder(std::string line, const std::string& placeholder,
                               const std::string& variables) {
  if (const std::size_t at = line.find(placeholder); at != std::string::npos) {
    line.replace(at, placeholder.size(), variables);
  }
  return line;
}

struct Submitted {
  std::string id;
  int exit_code = 0;  // with sbatch --wait, the job's own
};

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER" when the job is queued. With --wait
// (`waits`), sbatch then exits with the job's exit code, so the id alone says it was submitted.
Submitted submit(const std::vector<std::string>& cmd, bool waits = false) {
  const CommandResult r = run_command(cmd);
  const std::string id = r.output.substr(0, r.output.find_first_of(";\n"));
  if ((r.exit_code != 0 && !waits) || id.empty() ||
      id.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error(
        fmt::format("sbatch failed (exit code {}): {}", r.exit_code, quoted(cmd)));
  }
  return {id, r.exit_code};
}

// The cluster's limits, asking scontrol only for what the command line leaves open.
ClusterLimits cluster_limits(const Settings& s) {
  ClusterLimits limits;
  if (s.max_array_size < 0 || s.max_job_count < 0) limits = read_cluster_limits();
  if (s.max_array_size >= 0) limits.max_array_size = {s.max_array_size, "--max-array-size"};
  if (s.max_job_count >= 0) limits.max_job_count = {s.max_job_count, "--max-job-count"};
  if (limits.max_array_size.value < 1) {
    throw SweepError(fmt::format("this cluster accepts no job arrays (MaxArraySize {}, {})",
                                 limits.max_array_size.value, limits.max_array_size.from));
  }
  return limits;
}

// Every array task is a job to slurmctld, pending or not, throttled or not: a sweep larger than
// MaxJobCount would be refused part-way through, so it is refused before anything is submitted.
void check_job_count(std::size_t tasks, const Limit& max_job_count) {
  const std::size_t jobs = tasks + 1;  // and the merge job
  if (static_cast<long>(jobs) <= max_job_count.value) return;
  throw SweepError(fmt::format(
      "{} jobs ({} array tasks and the merge) exceed the cluster's MaxJobCount of {} ({}); "
      "--max-running does not help, as every queued task counts: submit the sweep in parts "
      "(split an axis over several sweep configs, each submitted when the last has finished) "
      "or ask the cluster's admins to raise MaxJobCount",
      jobs, tasks, max_job_count.value, max_job_count.from));
}

std::size_t count_completed(const Sweep& sweep) {
  std::size_t n = 0;
  for (const Point& p : sweep.points) n += has_completed_run(sweep.out.database(p)) ? 1 : 0;
  return n;
}

int run_submit(Settings s) {
  Sweep sweep = load(s);
  if (s.max_running >= 0) sweep.config.slurm.max_running = s.max_running;
  s.tools.sweep = fs::canonical("/proc/self/exe");
  s.tools.trainer = absolute_existing(s.tools.trainer, "trainer");
  s.tools.report = absolute_existing(s.tools.report, "report");
  s.tools.jobs = absolute_existing(s.tools.jobs, "jobs-dir");

  std::vector<Point> pending;
  for (const Point& p : sweep.points) {
    if (!has_completed_run(sweep.out.database(p))) pending.push_back(p);
  }
  if (pending.empty()) {
    fmt::print("# sweep {}: {} points, all completed; results in {}\n# nothing to submit\n",
               sweep.config.name, sweep.points.size(), sweep.out.dir.string());
    return 0;
  }
  const ClusterLimits limits = cluster_limits(s);
  const std::string stamp = utc_stamp();
  const CheckJob check =
      sweep.config.check_data ? plan_check(pending, sweep.out, stamp) : CheckJob{};
  check_job_count(pending.size() + check.points.size(), limits.max_job_count);
  const std::vector<ArrayJob> arrays =
      plan_arrays(pending, sweep.out, stamp, static_cast<std::size_t>(limits.max_array_size.value));
  fmt::print("# sweep {}: {} points, {} completed, {} to run in {} job arrays; results in {}\n",
             sweep.config.name, sweep.points.size(), sweep.points.size() - pending.size(),
             pending.size(), arrays.size(), sweep.out.dir.string());
  fmt::print("# cluster limits: MaxArraySize {} ({}), MaxJobCount {} ({})\n",
             limits.max_array_size.value, limits.max_array_size.from, limits.max_job_count.value,
             limits.max_job_count.from);
  // What the tasks of a GPU sweep train on, as their manifests' commands say.
  if (const int gpus = sweep.config.slurm.gpus_per_node; gpus > 0) {
    std::string devices;
    for (const std::string& d : sweep.devices) devices += (devices.empty() ? "" : ", ") + d;
    fmt::print("# {} GPUs per node, trained on with --device {}\n", gpus, devices);
  }
  // The throttle is per array: with several arrays, say what it allows for the whole sweep.
  if (const int n = sweep.config.slurm.max_running; n > 0) {
    fmt::print("# at most {} tasks of each array running at once (%{}){}\n", n, n,
               arrays.size() > 1 ? fmt::format(", {} in all", n * arrays.size()) : "");
  }
  fs::create_directories(sweep.out.dir / "runs");
  fs::create_directories(sweep.out.dir / "logs");
  // A dry run prints a script: the jobs' ids land in shell variables the later lines expand.
  std::string check_id;
  if (!check.points.empty()) {
    write_check_manifest(check, sweep.config, s.tools);
    const std::vector<std::string> cmd = check_command(sweep.config, check, sweep.out, s.tools);
    fmt::print(
        "# the data check: {} data set(s) read whole before any point starts; the arrays "
        "are cancelled if one has a bad file (its log: {})\n",
        check.points.size(), (sweep.out.dir / "logs" / "check_*.out").string());
    if (s.dry_run) {
      check_id = kCheckIdWord;
      fmt::print("check=$({})\n", quoted(cmd));
    } else {
      check_id = submit(cmd).id;
      fmt::print("submitted data check job {}\n", check_id);
    }
  }
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    write_manifest(arrays[i], sweep.out, s.tools);
    const std::vector<std::string> cmd =
        array_command(sweep.config, arrays[i], sweep.out, s.tools, check_id);
    fmt::print("# {} points on {} node(s), network {}{}\n", arrays[i].points.size(),
               arrays[i].nodes, arrays[i].network,
               arrays[i].parts > 1
                   ? fmt::format(" (array {} of {} for these)", arrays[i].part, arrays[i].parts)
                   : "");
    if (s.dry_run) {
      ids.push_back(fmt::format("${{array_{}}}", i));
      fmt::print("array_{}=$({})\n", i, expand_placeholder(quoted(cmd), kCheckIdWord, "${check}"));
    } else {
      ids.push_back(submit(cmd).id);
      fmt::print("submitted job array {}\n", ids.back());
    }
    std::fflush(stdout);
  }
  if (s.dry_run) {
    std::string after;
    for (const std::string& id : ids) after += (after.empty() ? "" : ":") + id;
    fmt::print("{}\n", expand_placeholder(quoted(merge_command(sweep.config, sweep.out, s.tools,
                                                               {kArrayIdsWord}, false)),
                                          kArrayIdsWord, after));
    return 0;
  }
  const std::vector<std::string> merge =
      merge_command(sweep.config, sweep.out, s.tools, ids, s.wait);
  const Submitted merged = submit(merge, s.wait);
  fmt::print("submitted merge job {}{}\n", merged.id, s.wait ? " and waited for it" : "");
  if (!s.wait) return 0;
  if (merged.exit_code != 0) {
    fmt::print("# the merge job exited {}: {}\n", merged.exit_code,
               (sweep.out.dir / "logs" / fmt::format("merge_{}.out", merged.id)).string());
  }
  const std::size_t completed = count_completed(sweep);
  fmt::print("# {} of {} points completed{}\n", completed, sweep.points.size(),
             merged.exit_code == 0 ? "; merged into " + sweep.out.merged().string() : "");
  if (!check_id.empty() && completed < sweep.points.size()) {
    fmt::print("# the data check's logs list any bad file: {}\n",
               (sweep.out.dir / "logs" / fmt::format("check_{}_*.out", check_id)).string());
  }
  return completed == sweep.points.size() ? 0 : 1;
}

int run_status(const Settings& s) {
  const Sweep sweep = load(s);
  fmt::print("point,workers,nodes,network,state\n");
  for (const Point& p : sweep.points) {
    fmt::print("{},{},{},{},{}\n", p.id, p.workers, p.nodes, p.network,
               has_completed_run(sweep.out.database(p)) ? "completed" : "pending");
  }
  return 0;
}

// For the array task's job script: the step's arguments, NUL-separated (read with mapfile -d '').
int run_point(const Settings& s) {
  for (const std::string& arg : read_manifest_task(s.manifest, s.task)) {
    std::cout << arg << '\0';
  }
  return std::cout.flush() ? 0 : 1;
}

// An integer option's lower bound, with a message a person can read (CLI11's own bounds print
// the range as 0 to 1.8e308).
CLI::Validator at_least(long lowest) {
  return CLI::Validator(
      [lowest](const std::string& text) {
        long value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not an integer";
        return value >= lowest ? std::string()
                               : fmt::format("must be >= {} (got {})", lowest, text);
      },
      fmt::format("N>={}", lowest));
}

void add_sweep_options(CLI::App* cmd, Settings& s) {
  cmd->add_option("sweep", s.sweep_file,
                  "Sweep config (TOML), e.g. configs/sweeps/cifar10-resnet20.toml")
      ->required();
  cmd->add_option("-o,--output", s.output, "Results dir (default: sweeps/<sweep name>)");
}

}  // namespace
}  // namespace commsgd::sweep

int main(int argc, char** argv) {
  using namespace commsgd::sweep;
  Settings s;
  CLI::App app(kDescription, "commsgd-sweep");
  app.require_subcommand(1);
  int (*action)(Settings) = nullptr;

  CLI::App* submit = app.add_subcommand("submit", "Submit the points not yet completed");
  add_sweep_options(submit, s);
  submit->add_flag("--dry-run", s.dry_run,
                   "Write the arrays' manifests and print the sbatch commands, submit nothing");
  submit->add_flag("--wait", s.wait, "Wait for the merge job; exit 1 unless every point completed");
  submit
      ->add_option("--max-running", s.max_running,
                   "Run at most N tasks of each job array at once (sbatch --array=0-K%N); "
                   "overrides the sweep config's slurm.max-running; 0: no limit")
      ->check(at_least(0));
  submit
      ->add_option("--max-array-size", s.max_array_size,
                   fmt::format("Split the points into arrays of at most N tasks (default: the "
                               "cluster's MaxArraySize from `scontrol show config`, or Slurm's "
                               "default {} without scontrol)",
                               kDefaultMaxArraySize))
      ->check(at_least(1));
  submit
      ->add_option("--max-job-count", s.max_job_count,
                   fmt::format("Refuse a sweep of more jobs than N (default: the cluster's "
                               "MaxJobCount from `scontrol show config`, or Slurm's default {})",
                               kDefaultMaxJobCount))
      ->check(at_least(1));
  submit->add_option("--trainer", s.tools.trainer, "commsgd-train the jobs run")
      ->capture_default_str();
  submit->add_option("--report", s.tools.report, "commsgd-report the merge job runs")
      ->capture_default_str();
  submit->add_option("--jobs-dir", s.tools.jobs, "The jobs/ dir (templates, network profiles)")
      ->capture_default_str();
  submit->callback([&] { action = [](Settings x) { return run_submit(std::move(x)); }; });

  CLI::App* status = app.add_subcommand("status", "List the points as CSV: completed or pending");
  add_sweep_options(status, s);
  status->callback([&] { action = [](Settings x) { return run_status(x); }; });

  CLI::App* point = app.add_subcommand("point", "Print an array task's job step (for its script)");
  point->add_option("manifest", s.manifest, "Manifest written by submit")->required();
  point->add_option("task", s.task, "Array task id")->required();
  point->callback([&] { action = [](Settings x) { return run_point(x); }; });

  try {
    app.parse(argc, argv);
    return action(std::move(s));
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const SweepError& e) {
    fmt::print(stderr, "commsgd-sweep: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "commsgd-sweep: error: {}\n", e.what());
    return 1;
  }
}
