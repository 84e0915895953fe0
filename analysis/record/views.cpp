#include "analysis/record/views.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <string>

#include "algorithms/baseline_algorithm.hpp"
#include "analysis/record/run_database.hpp"
#include "commsgd/record/views_sql.hpp"  // kViewsSql, generated from analysis/views.sql

namespace commsgd::record {
namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// The name views.sql leaves to the catalog, quoted as an SQL string by views.sql itself.
std::string views_sql() {
  static_assert(algorithms::kBaselineAlgorithm.find('\'') == std::string_view::npos);
  std::string sql(kViewsSql);
  replace_all(sql, "{baseline_algorithm}", algorithms::kBaselineAlgorithm);
  return sql;
}

// views.sql spells its statements exactly "DROP VIEW IF EXISTS name" and "CREATE VIEW name", so
// the TEMP variant is a textual rewrite. The drop must name the temp schema: an unqualified DROP
// of a view that only the file has would try to drop that one, and fail on a read-only file.
std::string temporary_views_sql() {
  std::string sql = views_sql();
  replace_all(sql, "DROP VIEW IF EXISTS ", "DROP VIEW IF EXISTS temp.");
  replace_all(sql, "CREATE VIEW ", "CREATE TEMP VIEW ");
  return sql;
}

}  // namespace

void install_views(sqlite3* db, std::string_view file, ViewScope scope) {
  const std::string sql = scope == ViewScope::temporary ? temporary_views_sql() : views_sql();
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    throw DatabaseError(fmt::format("{}: install views: {}", file, sqlite3_errmsg(db)));
}

}  // namespace commsgd::record
