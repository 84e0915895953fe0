#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "analysis/record/run_database.hpp"

namespace commsgd::trainer {

// Where, when and how big each rank of a run ran, for the `ranks` table (analysis/schema_v3.sql):
// every rank stamps itself and rank 0, which alone writes the database, records them all.

// The peak resident set of this process so far (VmHWM in /proc/self/status), in bytes; nullopt
// where the kernel does not say.
std::optional<std::int64_t> peak_rss_bytes();

// Collective. Every rank's row, in rank order: its host and `started_at` and, when `finished`,
// now and its peak resident set.
std::vector<record::RankRow> gather_ranks(comm::Communicator& comm, const std::string& started_at,
                                          bool finished);

}  // namespace commsgd::trainer
