#pragma once

#include "analysis/record/run_database.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {

// The `runs` row of this run: the options, where it ran (`device` as LibTorch names it, host,
// Slurm ids, the network profile's variables under "network_environment" in the config JSON),
// the model's parameter count ("parameters" in the config JSON, for the cost model), and which
// build.
record::RunInfo make_run_info(const Options& options, const std::string& device, int workers,
                              int nodes, std::size_t parameters);

// This machine's name, as the run record gives it.
std::string host_name();

}  // namespace commsgd::trainer
