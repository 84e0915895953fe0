// A run's failure as a rank other than 0 saw it, kept beside the run database instead of in it.
//
// Only processes on one host may open a run database: rank 0 writes it, and on a cluster the file
// lies on a network file system, where SQLite supports neither WAL nor two hosts' locks on one
// file (file_system.hpp). A failing rank elsewhere therefore writes its failure to a file of its
// own, DATABASE.peer-failures/RUN.rankN, which rank 0 folds into the run's row when it records
// the failure. A network file system may show another host's new file late, so the run's next
// resume and `commsgd-report merge` fold what rank 0 could not see yet.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/record/run_database.hpp"

namespace commsgd::record {

struct PeerFailure {
  std::string run_id;
  int rank = 0;
  std::string at;              // UTC ISO 8601, as utc_now_iso8601(): when the rank failed
  std::string reason;          // what failed; the row's exit_reason says "rank N: " and this
  std::filesystem::path file;  // where it was read from; empty before it is written
};

// DATABASE.peer-failures: one directory beside each database file.
std::filesystem::path peer_failures_dir(const std::filesystem::path& database);

// Writes the failure whole or not at all (a temporary file renamed into place); returns the file.
// Throws DatabaseError naming the file.
std::filesystem::path write_peer_failure(const std::filesystem::path& database,
                                         const PeerFailure& failure);

// The failures kept beside `database`, of every run or only of `run_id`, earliest first. A file
// that cannot be read as one (being written, cut short) is left for a later reading.
std::vector<PeerFailure> read_peer_failures(const std::filesystem::path& database,
                                            std::string_view run_id = {});

// Rank 0 and a resume: records `run_id`'s earliest failure kept beside `database` in `db`, that
// database (RunDatabase::record_peer_failure), then removes the run's files, and the directory
// once it is empty. Returns whether the run's row changed.
bool fold_peer_failures(RunDatabase& db, const std::filesystem::path& database,
                        std::string_view run_id);

// `commsgd-report merge`: records in `db` the earliest failure of each run kept beside `source`,
// a database that is only read (its files stay). Returns how many rows changed.
int record_peer_failures(RunDatabase& db, const std::filesystem::path& source);

}  // namespace commsgd::record
