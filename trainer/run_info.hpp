#pragma once

#include <filesystem>
#include <string>

#include "algorithms/algorithm.hpp"
#include "analysis/record/run_database.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {

// The `runs` row of this run: the options (and, under "left_out" in the config JSON, those of the
// --config file the algorithm does not take), where it ran (`device` as LibTorch names it, host,
// Slurm ids, the network profile's variables under "network_environment" in the config JSON),
// the model's parameter count ("parameters" in the config JSON, for the cost model), and which
// build.
record::RunInfo make_run_info(const Options& options, const std::string& device, int workers,
                              int nodes, std::size_t parameters);

// This machine's name, as the run record gives it.
std::string host_name();

// The run's database: --db, or RUN_ID.sqlite under --db-dir.
std::filesystem::path database_path(const Options& o, const std::string& run_id);

// Rank 0: records the failure without letting a second error (a broken database, say) hide the
// first; a peer's failure kept beside `file` that came first replaces `reason` (peer_failures.hpp).
void mark_failed(record::RunDatabase& db, const std::filesystem::path& file,
                 const std::string& run_id, const std::string& reason);

// A grad_stats row of one measurement (its histogram as JSON).
record::GradStatsRow grad_stats_row(const algorithms::GradStats& g, long step, int epoch);

// A rank other than 0 keeps its error beside the run's database for rank 0 to fold in: rank 0
// would only see the SIGTERM that follows when the job is ended, and only rank 0's host opens the
// database (peer_failures.hpp). Where the file cannot be written from this node, rank 0's record
// of the SIGTERM has to do: a warning says so.
void record_peer_failure(const Options& o, const std::string& run_id, int rank,
                         const std::string& error);

}  // namespace commsgd::trainer
