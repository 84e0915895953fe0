// Which file system a run database lies on, and the journal mode SQLite supports there.
//
// SQLite's WAL keeps its index in shared memory (the -shm file, mapped by every connection), so
// every process that opens the database must be on one host; SQLite does not support WAL on a
// network file system. A cluster's home and project directories are NFS, Lustre, GPFS or the
// like: there the run database uses the rollback journal, which needs only file locks.
#pragma once

#include <filesystem>
#include <string>

namespace commsgd::record {

struct FileSystem {
  std::string name;      // e.g. "ext4", "nfs", "lustre"; "unknown" where the type is not known
  bool network = false;  // shared between hosts (or behind FUSE, which may be)
};

// The file system of statfs(2)'s f_type.
FileSystem file_system_of_type(long f_type);

// The file system that holds `path`, or its nearest existing parent directory (a database file
// may not exist yet). Unknown, and local, where statfs fails.
FileSystem file_system_of(const std::filesystem::path& path);

enum class JournalMode { wal, rollback };

// WAL on a local file system (readers never block the writer), the rollback journal on a
// network one.
JournalMode journal_mode_for(const FileSystem& where);

}  // namespace commsgd::record
