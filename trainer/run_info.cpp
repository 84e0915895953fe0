#include "trainer/run_info.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>

#include "analysis/record/peer_failures.hpp"
#include "common/stable_hash.hpp"
#include "trainer/git_revision.hpp"

extern char** environ;

namespace commsgd::trainer {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// The transport settings a network profile exports (jobs/network/profile.sh), as set on rank 0:
// what Open MPI, UCX and NCCL were told to use is part of what was run.
nlohmann::json network_environment() {
  nlohmann::json variables = nlohmann::json::object();
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = text.substr(0, equals);
    for (const std::string_view prefix : {"OMPI_MCA_", "UCX_", "NCCL_", "COMMSGD_NETWORK"}) {
      if (name.starts_with(prefix)) {
        variables[std::string(name)] = std::string(text.substr(equals + 1));
        break;
      }
    }
  }
  return variables;
}

// The FNV-1a hash of a file's bytes, in hex: which model file a run trained, in its record.
std::string file_hash(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), {});
  return fmt::format("{:016x}", stable_hash(bytes));
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

record::RunInfo make_run_info(const Options& o, const std::string& device, int workers, int nodes,
                              std::size_t parameters) {
  record::RunInfo info;
  info.id = record::new_run_id();
  const algorithms::AlgorithmConfig algorithm = algorithm_config(o);
  info.algo = o.algo;
  info.selector = algorithm.selector;
  info.aggregation = algorithm.aggregation;
  info.topology = algorithm.topology;
  if (!algorithm.selector.empty()) info.density = o.density;
  info.model = o.model;
  info.dataset = o.dataset;
  info.workers = workers;
  info.nodes = nodes;
  info.network = o.network;
  info.backend = "mpi";
  info.device = device;
  info.batch_size = o.batch_size;
  info.lr = o.lr;
  info.epochs = o.epochs;
  info.seed = o.seed;
  nlohmann::json config = o;
  // The --config file's options that this run's algorithm does not take, with why ({} when
  // none): the record says what was given as well as what was used.
  config["left_out"] = o.left_out;
  config["network_environment"] = network_environment();
  config["parameters"] = parameters;
  if (!o.model_file.empty()) config["model_file_fnv1a64"] = file_hash(o.model_file);
  // What of the above is not the run's configuration (the transport environment holds per-launch
  // ids; the parameter count follows from the model), for the reports that group by it.
  std::vector<std::string> outside = keys_outside_configuration(o);
  outside.insert(outside.end(), {"network_environment", "parameters"});
  config["not_in_configuration"] = outside;
  info.config_json = config.dump();
  info.git_revision = git_revision();
  info.host = host_name();
  info.slurm_job_id = env("SLURM_JOB_ID");
  info.slurm_array_job_id = env("SLURM_ARRAY_JOB_ID");
  info.slurm_array_task_id = env("SLURM_ARRAY_TASK_ID");
  return info;
}

std::filesystem::path database_path(const Options& o, const std::string& run_id) {
  if (!o.db.empty()) return o.db;
  return std::filesystem::path(o.db_dir) / (run_id + ".sqlite");
}

void mark_failed(record::RunDatabase& db, const std::filesystem::path& file,
                 const std::string& run_id, const std::string& reason) {
  try {
    db.finish_run(run_id, record::RunStatus::failed, reason);
    record::fold_peer_failures(db, file, run_id);
  } catch (const std::exception& e) {
    fmt::print(stderr, "commsgd-train: warning: could not mark run {} failed: {}\n", run_id,
               e.what());
  }
}

record::GradStatsRow grad_stats_row(const algorithms::GradStats& g, long step, int epoch) {
  record::GradStatsRow row;
  row.step = step;
  row.epoch = epoch;
  row.contraction = g.contraction;
  row.bound_linear = g.bound_linear;
  row.bound_squared = g.bound_squared;
  const nlohmann::json histogram = {{"mean", g.mean},
                                    {"stddev", g.stddev},
                                    {"low", g.histogram.low},
                                    {"high", g.histogram.high},
                                    {"counts", g.histogram.counts},
                                    {"below", g.histogram.below},
                                    {"above", g.histogram.above}};
  row.histogram_json = histogram.dump();
  return row;
}

void record_peer_failure(const Options& o, const std::string& run_id, int rank,
                         const std::string& error) {
  const std::filesystem::path file = database_path(o, run_id);
  if (!std::filesystem::exists(file)) return;  // rank 0 failed before it recorded the run
  try {
    record::write_peer_failure(file, {run_id, rank, record::utc_now_iso8601(), error, {}});
  } catch (const std::exception& e) {
    fmt::print(stderr, "commsgd-train: warning: rank {}: could not record its failure: {}\n", rank,
               e.what());
  }
}

}  // namespace commsgd::trainer
