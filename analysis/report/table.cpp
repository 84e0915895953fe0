#include "analysis/report/table.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace commsgd::report {

std::size_t Table::column(std::string_view name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) throw std::logic_error("no column " + std::string(name));
  return static_cast<std::size_t>(it - columns.begin());
}

Value parse_value(std::string_view text) {
  // from_chars also reads "inf" and "nan", which are names here, not numbers.
  if (text.empty() || text.find_first_not_of("0123456789-.eE") != std::string_view::npos)
    return std::string(text);
  const char* first = text.data();
  const char* last = text.data() + text.size();
  std::int64_t i = 0;
  if (auto [end, ec] = std::from_chars(first, last, i); ec == std::errc() && end == last) return i;
  double d = 0;
  if (auto [end, ec] = std::from_chars(first, last, d); ec == std::errc() && end == last) return d;
  return std::string(text);
}

bool is_null(const Value& v) {
  return std::holds_alternative<std::monostate>(v);
}

double as_double(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw std::logic_error("not a number");
}

}  // namespace commsgd::report
