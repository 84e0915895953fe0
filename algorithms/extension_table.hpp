#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commsgd::algorithms {

// A name that is not in a table, for any table: "--selector: unknown selector 'x' (exact,
// gaussian or ...)", the option, the kind of row and the choices.
class UnknownName : public std::invalid_argument {
 public:
  UnknownName(const std::string& option, const std::string& kind, std::string_view name,
              const std::string& choices)
      : std::invalid_argument(option + ": unknown " + kind + " '" + std::string(name) + "' (" +
                              choices + ")") {}
};

// The one way an extension point lists its choices (algorithms, selectors, aggregations, data
// sets, models): a table of rows, each with at least a `name` (the option's value), a `summary`
// (one line for --help) and, where the table builds what it names, a factory `make`; where only
// some rows take an option, `own_options` (algorithms/own_options.hpp). The option's choices and
// help, the error for an unknown name, the checks of which option applies to which row and the
// tests that build every row all read the table; an extension or a test adds a row before options
// are parsed.
template <class Row>
class ExtensionTable {
 public:
  // option: "--selector"; kind: "selector", for the error messages.
  ExtensionTable(std::string option, std::string kind, std::initializer_list<Row> rows)
      : option_(std::move(option)), kind_(std::move(kind)) {
    for (const Row& row : rows) add(row);
  }

  const std::string& option() const { return option_; }  // "--selector"
  auto begin() const { return rows_.begin(); }
  auto end() const { return rows_.end(); }
  std::size_t size() const { return rows_.size(); }
  const Row& operator[](std::size_t i) const { return rows_[i]; }

  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const Row& row : rows_) names.emplace_back(row.name);
    return names;
  }
  // "a, b or c": every row's name, or those of the rows `keep` keeps.
  std::string choices() const {
    return choices([](const Row&) { return true; });
  }
  template <class Keep>
  std::string choices(Keep&& keep) const {
    std::vector<std::string_view> kept;
    for (const Row& row : rows_) {
      if (keep(row)) kept.push_back(row.name);
    }
    std::string text;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      if (i > 0) text += i + 1 == kept.size() ? " or " : ", ";
      text += kept[i];
    }
    return text;
  }
  // `intro`, then a line "  name: summary" per row.
  std::string help(std::string_view intro) const {
    std::string text(intro);
    for (const Row& row : rows_) {
      text += "\n  " + std::string(row.name) + ": " + std::string(row.summary);
    }
    return text;
  }

  const Row* lookup(std::string_view name) const {
    for (const Row& row : rows_) {
      if (row.name == name) return &row;
    }
    return nullptr;
  }
  // Throws UnknownName for a name of no row.
  const Row& find(std::string_view name) const {
    if (const Row* row = lookup(name)) return *row;
    throw UnknownName(option_, kind_, name, choices());
  }

  // Throws std::invalid_argument when the name is empty or taken, or a row of a table whose rows
  // build something has no factory.
  void add(const Row& row) {
    if (row.name.empty()) throw std::invalid_argument(option_ + ": a " + kind_ + " needs a name");
    if (lookup(row.name) != nullptr) {
      throw std::invalid_argument(option_ + ": there is a " + kind_ + " '" + std::string(row.name) +
                                  "' already");
    }
    if constexpr (requires { row.make; }) {
      if (row.make == nullptr) {
        throw std::invalid_argument(option_ + ": the " + kind_ + " '" + std::string(row.name) +
                                    "' has no factory");
      }
    }
    rows_.push_back(row);
  }

 private:
  std::string option_, kind_;
  std::vector<Row> rows_;
};

}  // namespace commsgd::algorithms
