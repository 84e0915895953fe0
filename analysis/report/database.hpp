// Opening run databases for reports. One file is queried directly; several are first merged into
// an in-memory database (as `merge` would), so every report reads runs/*.sqlite directly. Either
// way this build's views are installed as TEMP views and the connection then refuses writes
// (PRAGMA query_only, no ATTACH), so a report never changes the files it reads.
#pragma once

#include <filesystem>
#include <vector>

#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

// An existing run database, for reading (and, by merge, copying from). Throws InputError with one
// line saying why a file is not one: missing, a directory, not SQLite, SQLite but not ours, or
// another schema version.
Connection open_run_database(const std::filesystem::path& file);

// The database every report queries: `files` (at least one) as one read-only database.
Connection open_for_report(const std::vector<std::filesystem::path>& files);

}  // namespace commsgd::report
