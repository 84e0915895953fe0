#pragma once

#include "analysis/record/run_database.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {

// The `runs` row of this run: the options, where it ran (host, Slurm ids, the network profile's
// variables under "network_environment" in the config JSON), and which build.
record::RunInfo make_run_info(const Options& options, int workers, int nodes);

}  // namespace commsgd::trainer
