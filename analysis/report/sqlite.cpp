#include "analysis/report/sqlite.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

namespace commsgd::report {

void Connection::Close::operator()(sqlite3* db) const noexcept {
  sqlite3_close_v2(db);
}

Connection::Connection(const std::string& file, int flags, std::string name)
    : name_(std::move(name)) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  db_.reset(raw);  // sqlite returns a handle even on failure; it must be closed all the same
  if (rc != SQLITE_OK) fail("cannot open");
}

void Connection::fail(std::string_view what) const {
  throw InputError(fmt::format("{}: {}: {}", name_, what, sqlite3_errmsg(db_.get())));
}

void Connection::exec(const std::string& sql) const {
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
}

Table Connection::query(std::string_view sql, const std::vector<Value>& params) const {
  Statement st(*this, sql);
  st.bind(params);
  Table t{st.columns(), {}};
  while (st.step()) t.rows.push_back(st.row());
  return t;
}

int Connection::changes() const {
  return sqlite3_changes(db_.get());
}

std::vector<std::string> Connection::columns_of(std::string_view relation) const {
  return Statement(*this, fmt::format("SELECT * FROM \"{}\" LIMIT 0", relation)).columns();
}

void Statement::Finalize::operator()(sqlite3_stmt* s) const noexcept {
  sqlite3_finalize(s);
}

Statement::Statement(const Connection& db, std::string_view sql) : db_(db) {
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &raw, &tail) !=
      SQLITE_OK)
    db.fail("query");
  stmt_.reset(raw);
  if (!raw) throw InputError(fmt::format("{}: the query is empty", db.name()));
  // What follows the first statement must prepare to nothing: whitespace and comments only.
  sqlite3_stmt* next = nullptr;
  const int rest = static_cast<int>(sql.data() + sql.size() - tail);
  const int rc = sqlite3_prepare_v2(db.get(), tail, rest, &next, nullptr);
  sqlite3_finalize(next);
  if (rc != SQLITE_OK || next)
    throw InputError(fmt::format("{}: one SQL statement at a time, please", db.name()));
}

void Statement::bind(const std::vector<Value>& params) {
  sqlite3_stmt* s = stmt_.get();
  sqlite3_reset(s);
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(s))
    throw InputError(fmt::format("{}: the query has {} parameters, {} given", db_.name(),
                                 sqlite3_bind_parameter_count(s), params.size()));
  for (int i = 1; i <= static_cast<int>(params.size()); ++i) {
    const Value& v = params[static_cast<std::size_t>(i - 1)];
    int rc = SQLITE_OK;
    if (const auto* n = std::get_if<std::int64_t>(&v)) {
      rc = sqlite3_bind_int64(s, i, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      rc = sqlite3_bind_double(s, i, *d);
    } else if (const auto* t = std::get_if<std::string>(&v)) {
      rc = sqlite3_bind_text(s, i, t->c_str(), static_cast<int>(t->size()), SQLITE_TRANSIENT);
    } else {
      rc = sqlite3_bind_null(s, i);
    }
    if (rc != SQLITE_OK) db_.fail("bind");
  }
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) db_.fail("query");
  return false;
}

Row Statement::row() const {
  sqlite3_stmt* s = stmt_.get();
  Row row;
  for (int c = 0; c < sqlite3_column_count(s); ++c) {
    switch (sqlite3_column_type(s, c)) {
      case SQLITE_INTEGER:
        row.emplace_back(std::int64_t{sqlite3_column_int64(s, c)});
        break;
      case SQLITE_FLOAT:
        row.emplace_back(sqlite3_column_double(s, c));
        break;
      case SQLITE_NULL:
        row.emplace_back(std::monostate{});
        break;
      default:  // text; a BLOB (none in a run database) reads as its bytes
        row.emplace_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, c)),
                                     static_cast<std::size_t>(sqlite3_column_bytes(s, c))));
        break;
    }
  }
  return row;
}

std::vector<std::string> Statement::columns() const {
  std::vector<std::string> names;
  for (int c = 0; c < sqlite3_column_count(stmt_.get()); ++c)
    names.emplace_back(sqlite3_column_name(stmt_.get(), c));
  return names;
}

bool Statement::read_only() const {
  return sqlite3_stmt_readonly(stmt_.get()) != 0;
}

}  // namespace commsgd::report
