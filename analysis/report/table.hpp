// The result of every report: named columns and rows of SQLite values, formatted by format.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace commsgd::report {

// A value as SQLite stores it; monostate is NULL. (Run databases hold no BLOBs.)
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
using Row = std::vector<Value>;

struct Table {
  std::vector<std::string> columns;
  std::vector<Row> rows;

  // Index of a column the caller knows is there (a query it wrote); throws std::logic_error.
  std::size_t column(std::string_view name) const;
};

// A value given on the command line (a filter, a query parameter): an integer or a real when the
// whole text is one, text otherwise, so `workers=4` compares as a number and `algo=topk` as text.
Value parse_value(std::string_view text);

bool is_null(const Value& v);
// The value as a double: integers convert, NULL and text throw std::logic_error (callers read
// numeric columns of queries they wrote).
double as_double(const Value& v);

}  // namespace commsgd::report
