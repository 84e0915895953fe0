#include "trainer/run_info.hpp"

#include <unistd.h>

#include <cstdlib>

namespace commsgd::trainer {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

record::RunInfo make_run_info(const Options& o, int workers, int nodes,
                              const std::string& config_json) {
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
  info.device = "cpu";
  info.batch_size = o.batch_size;
  info.lr = o.lr;
  info.epochs = o.epochs;
  info.seed = o.seed;
  info.config_json = config_json;
  info.git_revision = COMMSGD_GIT_REVISION;
  info.host = host_name();
  info.slurm_job_id = env("SLURM_JOB_ID");
  info.slurm_array_job_id = env("SLURM_ARRAY_JOB_ID");
  info.slurm_array_task_id = env("SLURM_ARRAY_TASK_ID");
  return info;
}

}  // namespace commsgd::trainer
