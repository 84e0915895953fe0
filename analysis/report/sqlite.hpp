// The SQLite C API as the report tool uses it: an owned connection, prepared statements bound to
// Values (filters and parameters are always bound, never spliced into SQL), and InputError, the
// error every bad input becomes.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/table.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace commsgd::report {

// Bad input: a file that is missing or not a run database, an unknown column, a query that does
// not parse. main() prints what() as one line and exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Connection {
 public:
  // sqlite3_open_v2(file, flags); `name` is how error messages refer to the database.
  Connection(const std::string& file, int flags, std::string name);

  sqlite3* get() const { return db_.get(); }
  const std::string& name() const { return name_; }

  void exec(const std::string& sql) const;  // statements without parameters
  Table query(std::string_view sql, const std::vector<Value>& params = {}) const;
  int changes() const;  // rows the last INSERT, UPDATE or DELETE changed
  // The columns of a table or view, which must be a name the caller checked or wrote itself.
  std::vector<std::string> columns_of(std::string_view relation) const;
  // Throws InputError "<name>: <what>: <sqlite's message>".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  struct Close {
    void operator()(sqlite3* db) const noexcept;
  };
  std::unique_ptr<sqlite3, Close> db_;
  std::string name_;
};

// One prepared statement. SQL with a second statement after the first is refused: a query
// given on the command line runs exactly as checked.
class Statement {
 public:
  Statement(const Connection& db, std::string_view sql);

  void bind(const std::vector<Value>& params);  // resets, then binds ?1, ?2, ... in order
  bool step();                                  // true: a row is available
  Row row() const;                              // the current row
  std::vector<std::string> columns() const;
  bool read_only() const;  // the statement does not write the database (sqlite3_stmt_readonly)

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const noexcept;
  };
  const Connection& db_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

}  // namespace commsgd::report
