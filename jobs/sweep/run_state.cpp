#include "jobs/sweep/run_state.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>

#include "jobs/sweep/sweep_config.hpp"

namespace commsgd::sweep {

bool has_completed_run(const std::filesystem::path& database) {
  if (!std::filesystem::exists(database)) return false;
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(database.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  sqlite3_stmt* raw_statement = nullptr;
  if (opened != SQLITE_OK ||
      sqlite3_prepare_v2(db.get(), "SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'completed')",
                         -1, &raw_statement, nullptr) != SQLITE_OK) {
    throw SweepError(
        fmt::format("{}: not a run database: {}", database.string(), sqlite3_errmsg(db.get())));
  }
  const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw_statement,
                                                                        sqlite3_finalize);
  sqlite3_busy_timeout(db.get(), 30'000);  // a run may be writing it right now
  if (sqlite3_step(statement.get()) != SQLITE_ROW) {
    throw SweepError(
        fmt::format("{}: cannot read: {}", database.string(), sqlite3_errmsg(db.get())));
  }
  return sqlite3_column_int(statement.get(), 0) != 0;
}

}  // namespace commsgd::sweep
