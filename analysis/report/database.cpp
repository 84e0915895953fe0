#include "analysis/report/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>

#include "analysis/record/run_database.hpp"
#include "analysis/record/run_figures.hpp"
#include "analysis/record/views.hpp"
#include "analysis/report/merge.hpp"
#include "analysis/report/papers.hpp"

namespace commsgd::report {
namespace {

namespace fs = std::filesystem;
using record::RunDatabase;

// The first read is where a file that is not SQLite shows up; say so plainly.
std::int64_t user_version(const Connection& db) {
  try {
    return std::get<std::int64_t>(db.query("PRAGMA user_version").rows.at(0).at(0));
  } catch (const InputError&) {
    if (sqlite3_errcode(db.get()) == SQLITE_NOTADB)
      throw InputError(fmt::format("{}: not an SQLite database", db.name()));
    throw;
  }
}

// Every table of this build's schema, through each of its steps.
void create_schema(const Connection& db) {
  for (const std::string_view step : record::schema_steps()) db.exec(std::string(step));
  db.exec(fmt::format("PRAGMA user_version = {}", RunDatabase::kSchemaVersion));
}

// A file of an older schema reads as if migrated, without writing to it. Temporary objects on
// this connection shadow the file's (names resolve to them first; the file is as it was): a table
// added since, and each table of run figures, which refresh_figures computes for this connection,
// is an empty temporary table; a table of records that has gained columns since is a temporary
// view of it with those columns NULL, as a migration leaves them.
void add_tables_of_later_versions(const Connection& db) {
  const Connection current(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "schema");
  create_schema(current);
  const std::string_view create = "CREATE TABLE ";
  for (const Row& row :
       current.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'").rows) {
    const std::string name = std::get<std::string>(row.at(0)),
                      sql = std::get<std::string>(row.at(1));
    const Value found =
        db.query("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                 {name})
            .rows.at(0)
            .at(0);
    const bool figures = name == "run_figures" || name == "run_overlaps";
    if ((std::get<std::int64_t>(found) == 0 || figures) && sql.starts_with(create)) {
      db.exec("CREATE TEMP TABLE " + sql.substr(create.size()));
      continue;
    }
    const std::vector<std::string> had =
        Statement(db, fmt::format("SELECT * FROM main.{} LIMIT 0", name)).columns();
    std::string added;
    for (const std::string& column : current.columns_of(name)) {
      if (std::find(had.begin(), had.end(), column) == had.end())
        added += fmt::format(", NULL AS {}", column);
    }
    if (!added.empty())
      db.exec(fmt::format("CREATE TEMP VIEW {0} AS SELECT *{1} FROM main.{0}", name, added));
  }
}

void refresh_figures(const Connection& db, record::FigureTables tables) {
  try {
    record::refresh_all_run_figures(db.get(), db.name(), tables);
  } catch (const record::DatabaseError& e) {
    throw InputError(e.what());
  }
}

// A large file of an older version pays for its figures on every report: say once how to stop it.
void note_older_file(const Connection& db) {
  constexpr std::int64_t kManyRuns = 1000;
  const auto runs = std::get<std::int64_t>(db.query("SELECT count(*) FROM runs").rows.at(0).at(0));
  if (runs < kManyRuns) return;
  fmt::print(stderr,
             "commsgd-report: note: {} has schema version {}, so each report computes the "
             "figures of its {} runs; `commsgd-report merge -o NEW {}` writes a current copy "
             "that reports read at once\n",
             db.name(), user_version(db), runs, db.name());
}

void check_schema(const Connection& db) {
  const std::int64_t version = user_version(db);
  if (version == RunDatabase::kSchemaVersion) return;
  if (version > 0 && version < RunDatabase::kSchemaVersion) {
    add_tables_of_later_versions(db);
    return;
  }
  if (version == 0) {
    const Value objects = db.query("SELECT count(*) FROM sqlite_master").rows.at(0).at(0);
    throw InputError(fmt::format(
        "{}: {}; not a commsgd run database", db.name(),
        std::get<std::int64_t>(objects) == 0 ? "empty" : "has tables but no schema version"));
  }
  throw InputError(
      fmt::format("{}: schema version {}, but this build reads version {}{}", db.name(), version,
                  RunDatabase::kSchemaVersion,
                  version > RunDatabase::kSchemaVersion ? "; use a newer commsgd-report" : ""));
}

// Current view definitions and the papers' values on this connection only, then no writes at all:
// `sql` runs whatever read-only query it is given on this connection.
void prepare_for_queries(const Connection& db) {
  try {
    record::install_views(db.get(), db.name(), record::ViewScope::temporary);
  } catch (const record::DatabaseError& e) {
    throw InputError(e.what());
  }
  install_paper_values(db);
  db.exec("PRAGMA query_only = ON");
  sqlite3_limit(db.get(), SQLITE_LIMIT_ATTACHED, 0);  // ATTACH would create files
}

}  // namespace

Connection open_run_database(const fs::path& file) {
  std::error_code ec;  // a path that cannot be looked at reads as missing
  const fs::file_status status = fs::status(file, ec);
  if (!fs::exists(status)) throw InputError(fmt::format("{}: no such file", file.string()));
  if (fs::is_directory(status)) throw InputError(fmt::format("{}: is a directory", file.string()));
  // Read-write without CREATE, though nothing writes: the last connection to close a WAL
  // database removes its -wal and -shm files, which a read-only one would leave behind. A
  // write-protected file opens read-only all the same.
  Connection db(file.string(), SQLITE_OPEN_READWRITE, file.string());
  check_schema(db);
  return db;
}

Connection open_for_report(const std::vector<fs::path>& files) {
  if (files.size() == 1) {
    Connection db = open_run_database(files[0]);
    // A file from before version 4 has no run figures: computed once, into its TEMP tables, for
    // this connection (a merge's sources need none: the merge computes its own).
    if (user_version(db) < RunDatabase::kSchemaVersion) {
      refresh_figures(db, record::FigureTables::temp);
      note_older_file(db);
    }
    prepare_for_queries(db);
    return db;
  }
  Connection merged(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                    fmt::format("{} databases", files.size()));
  create_schema(merged);
  for (const fs::path& file : files) {
    merge_into(merged, open_run_database(file), MergedFigures::leave_to_caller);
  }
  refresh_figures(merged, record::FigureTables::main);
  prepare_for_queries(merged);
  return merged;
}

}  // namespace commsgd::report
