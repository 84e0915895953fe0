// --where filters: COLUMN OP VALUE, with OP one of = != < <= > >= and ~ (SQL LIKE, % and _ as
// wildcards), with or without spaces around OP. The column must be one of the relation's own
// columns and the value is always a bound parameter, so no filter can change the shape of a query.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/table.hpp"

namespace commsgd::report {

struct Filter {
  std::string column, op;
  Value value;
  std::string text;  // as given, for messages
};

// Throws InputError when `text` is not COLUMN OP VALUE.
Filter parse_filter(std::string_view text);
// column = value, for the shortcut options (--algo topk, --workers 4, ...).
Filter equals(std::string column, std::string_view value);

struct Where {
  std::string sql;  // "" or "WHERE \"column\" op ? AND ..."
  std::vector<Value> params;
};

// Throws InputError naming the first filter whose column `relation` does not have, and the
// columns it does have.
Where where_clause(const std::vector<Filter>& filters, std::string_view relation,
                   const std::vector<std::string>& columns);

}  // namespace commsgd::report
