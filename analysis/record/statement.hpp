// The SQLite calls the run-record library makes, each failure a DatabaseError naming the file
// and what was being done: for run_database.cpp and run_figures.cpp, not for the library's users.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "analysis/record/run_database.hpp"

namespace commsgd::record {

[[noreturn]] inline void fail(std::string_view file, std::string_view what, sqlite3* db) {
  throw DatabaseError(fmt::format("{}: {}: {}", file, what, sqlite3_errmsg(db)));
}

// Runs SQL without parameters (pragmas, transaction control, the schema script). Errors name
// `what`, or the SQL itself when that is a one-liner.
inline void exec(sqlite3* db, std::string_view file, const char* sql, const char* what = nullptr) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    fail(file, what ? what : sql, db);
}

// A prepared statement. bind() sets every parameter in order from its arguments: nullopt binds
// NULL and a Stat fills two parameters (mean, max), matching the steps columns.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view file, std::string_view what, std::string_view sql)
      : db_(db), file_(file), what_(what) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
      fail(file_, what_, db_);
    stmt_.reset(s);
  }

  template <class... Ts>
  Statement& bind(const Ts&... values) {
    sqlite3_reset(stmt_.get());  // reuse: the previous step's error, if any, was already thrown
    int i = 0;
    (bind_one(i, values), ...);
    if (i != sqlite3_bind_parameter_count(stmt_.get()))
      throw std::logic_error(fmt::format("{}: bound {} of {} parameters", what_, i,
                                         sqlite3_bind_parameter_count(stmt_.get())));
    return *this;
  }

  bool step() {  // true: a row is available; false: done
    int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(file_, what_, db_);
  }
  void execute() {
    while (step()) {
    }
  }
  std::int64_t column_int(int col) { return sqlite3_column_int64(stmt_.get(), col); }
  double column_double(int col) { return sqlite3_column_double(stmt_.get(), col); }

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };

  void check(int rc) {
    if (rc != SQLITE_OK) fail(file_, what_, db_);
  }
  void bind_one(int& i, std::int64_t v) { check(sqlite3_bind_int64(stmt_.get(), ++i, v)); }
  void bind_one(int& i, int v) { bind_one(i, std::int64_t{v}); }
  void bind_one(int& i, double v) { check(sqlite3_bind_double(stmt_.get(), ++i, v)); }
  void bind_one(int& i, std::string_view v) {
    // A null data() would bind SQL NULL, but an empty string_view is the empty string.
    check(sqlite3_bind_text(stmt_.get(), ++i, v.data() ? v.data() : "", static_cast<int>(v.size()),
                            SQLITE_TRANSIENT));
  }
  void bind_one(int& i, std::nullopt_t) { check(sqlite3_bind_null(stmt_.get(), ++i)); }
  template <class T>
  void bind_one(int& i, const std::optional<T>& v) {
    v ? bind_one(i, *v) : bind_one(i, std::nullopt);
  }
  void bind_one(int& i, const Stat& s) {
    bind_one(i, s.mean);
    bind_one(i, s.max);
  }

  sqlite3* db_;
  std::string_view file_, what_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

// BEGIN IMMEDIATE takes the write lock up front: a deferred transaction that reads and then
// writes can fail with SQLITE_BUSY at the upgrade without waiting for the busy timeout.
// Rolls back unless commit() succeeded.
class Transaction {
 public:
  Transaction(sqlite3* db, std::string_view file) : db_(db), file_(file) {
    exec(db_, file_, "BEGIN IMMEDIATE");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    exec(db_, file_, "COMMIT");
    committed_ = true;
  }

 private:
  sqlite3* db_;
  std::string_view file_;
  bool committed_ = false;
};

}  // namespace commsgd::record
