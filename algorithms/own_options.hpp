#pragma once

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/extension_table.hpp"

namespace commsgd::algorithms {

// The one way a row of any table (algorithms, models, data sets) says which options it takes: it
// lists, by flag, the options only some rows take ({"--qsgd-levels", "--qsgd-bucket"}). An option
// no row of the table lists applies to every row of it.
using OwnOptions = std::span<const std::string_view>;

// Whether an option, by flag ("--powersgd-rank"), was given: commsgd-train asks its parser, which
// counted it on the command line or in the config file; a flag given false asks for nothing.
using OptionGiven = std::function<bool(std::string_view flag)>;

// Options given for a row that does not take them: the flags, and why ("--topology applies to
// --algo sgp, osgp, dpsgd or adpsgd, not --algo dense").
struct OptionNotTaken {
  std::vector<std::string> flags;
  std::string reason;
};

template <class Row>
bool takes_option(const Row& row, std::string_view flag) {
  return std::ranges::find(row.own_options, flag) != row.own_options.end();
}

// "--dataset image-folder", "--algo dpsgd or adpsgd": the rows of `table` that take `flag`.
template <class Row>
std::string rows_taking(const ExtensionTable<Row>& table, std::string_view flag) {
  return table.option() + " " +
         table.choices([&](const Row& row) { return takes_option(row, flag); });
}

// The options given for `row` that some rows of `table` take and `row` does not, one entry for
// each set of rows that takes them, in the order the table's rows first list them.
template <class Row>
std::vector<OptionNotTaken> own_options_not_taken(const ExtensionTable<Row>& table, const Row& row,
                                                  const OptionGiven& given) {
  std::vector<std::string_view> listed;
  for (const Row& r : table) {
    for (std::string_view flag : r.own_options) {
      if (std::ranges::find(listed, flag) == listed.end()) listed.push_back(flag);
    }
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> by_rows;  // rows taking, flags
  for (std::string_view flag : listed) {
    if (takes_option(row, flag) || !given(flag)) continue;
    std::string where = rows_taking(table, flag);
    auto same = std::ranges::find(by_rows, where, &decltype(by_rows)::value_type::first);
    if (same == by_rows.end()) same = by_rows.insert(by_rows.end(), {std::move(where), {}});
    same->second.emplace_back(flag);
  }
  std::vector<OptionNotTaken> found;
  for (auto& [where, flags] : by_rows) {
    std::string names;
    for (std::size_t i = 0; i < flags.size(); ++i) {
      if (i > 0) names += i + 1 == flags.size() ? " and " : ", ";
      names += flags[i];
    }
    std::string reason = names + (flags.size() == 1 ? " applies to " : " apply to ") + where +
                         ", not " + table.option() + " " + std::string(row.name);
    found.push_back({std::move(flags), std::move(reason)});
  }
  return found;
}

}  // namespace commsgd::algorithms
