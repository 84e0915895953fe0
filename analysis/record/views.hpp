// The views of analysis/views.sql (throughput, scaling efficiency, time breakdown, ...). They hold
// no data, so they are re-created rather than migrated: every install drops and re-creates all of
// them with this build's definitions.
#pragma once

#include <string_view>

struct sqlite3;

namespace commsgd::record {

enum class ViewScope {
  persistent,  // stored in the file, for sqlite3 shells and other tools (needs write access)
  temporary,   // TEMP views on this connection only: works read-only and leaves the file as it is
};

// Runs the view script on `db`; throws DatabaseError naming `file` on failure. The caller
// provides the transaction, if it wants one.
void install_views(sqlite3* db, std::string_view file, ViewScope scope);

}  // namespace commsgd::record
