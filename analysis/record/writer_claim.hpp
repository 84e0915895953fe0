// One run at a time in a database file on a network file system.
//
// There SQLite uses the rollback journal, whose safety between writers rests on file locks, and
// locks over NFS and its kind are not to be trusted (file_system.hpp). A run database written by
// one run (a file per run, as sweeps and the job templates keep them) needs nothing more; a file
// that several runs share (--db) is claimed for the time a run writes it: DATABASE.writer is
// created exclusively (O_EXCL, atomic on NFS v3 and later, Lustre and GPFS), and a second run
// finds the claim and stops with a line naming the run that holds it.
#pragma once

#include <filesystem>
#include <string_view>

#include "analysis/record/run_database.hpp"

namespace commsgd::record {

// The claim already belongs to a live run; what() names it, where it runs and what to do.
class DatabaseClaimed : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

class WriterClaim {
 public:
  // Claims `database` for `run_id`. A claim left by a process of this host that no longer runs
  // is taken over; one held by a live process, or by any process of another host, throws
  // DatabaseClaimed. Other failures to create the file throw DatabaseError.
  WriterClaim(const std::filesystem::path& database, std::string_view run_id);
  ~WriterClaim();  // removes the claim
  WriterClaim(const WriterClaim&) = delete;
  WriterClaim& operator=(const WriterClaim&) = delete;

 private:
  std::filesystem::path file_;
};

// DATABASE.writer.
std::filesystem::path writer_claim_file(const std::filesystem::path& database);

// Removes the claim on `database` if this process holds it: for a process about to _exit, whose
// WriterClaim will not be destroyed.
void release_writer_claim(const std::filesystem::path& database);

}  // namespace commsgd::record
