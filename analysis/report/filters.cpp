#include "analysis/report/filters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "analysis/report/sqlite.hpp"

namespace commsgd::report {
namespace {

struct Operator {
  std::string_view spelling, sql;
};
// Two-character operators first, so that "<=" is not read as "<" followed by "=...".
constexpr std::array<Operator, 7> kOperators = {
    {{"!=", "<>"}, {"<=", "<="}, {">=", ">="}, {"=", "="}, {"<", "<"}, {">", ">"}, {"~", "LIKE"}}};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Spaces around the column, the operator and the value are only layout ('workers >= 4' is
// 'workers>=4'): column names have none, and a value with a space at either end would only match
// by accident.
std::string_view trim_spaces(std::string_view text) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

}  // namespace

Filter parse_filter(std::string_view text) {
  const std::string_view expression = trim_spaces(text);
  const std::size_t end = static_cast<std::size_t>(
      std::find_if_not(expression.begin(), expression.end(), is_name_char) - expression.begin());
  const std::string_view rest = trim_spaces(expression.substr(end));
  for (const Operator& op : kOperators) {
    if (end > 0 && rest.starts_with(op.spelling)) {
      const std::string_view value = trim_spaces(rest.substr(op.spelling.size()));
      return Filter{std::string(expression.substr(0, end)), std::string(op.spelling),
                    parse_value(value), std::string(text)};
    }
  }
  throw InputError(
      fmt::format("--where {}: expected COLUMN OP VALUE with OP one of = != < <= > >= ~", text));
}

Filter equals(std::string column, std::string_view value) {
  std::string text = fmt::format("{}={}", column, value);
  return Filter{std::move(column), "=", parse_value(value), std::move(text)};
}

Where where_clause(const std::vector<Filter>& filters, std::string_view relation,
                   const std::vector<std::string>& columns) {
  Where where;
  for (const Filter& f : filters) {
    if (std::find(columns.begin(), columns.end(), f.column) == columns.end()) {
      throw InputError(fmt::format("unknown filter column '{}' in --where {}; {} has: {}", f.column,
                                   f.text, relation, fmt::join(columns, ", ")));
    }
    const auto op = std::find_if(kOperators.begin(), kOperators.end(),
                                 [&](const Operator& o) { return o.spelling == f.op; });
    where.sql +=
        fmt::format("{} \"{}\" {} ?", where.sql.empty() ? "WHERE" : " AND", f.column, op->sql);
    where.params.push_back(f.value);
  }
  return where;
}

}  // namespace commsgd::report
