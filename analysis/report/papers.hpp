// The papers commsgd reproduces, as results/papers.toml gives them (embedded at build time):
// each paper's setting, the values it reports with the table or figure of each, and its claims.
// Reports set commsgd's measurements beside these values; SQL sees them as paper_values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/sqlite.hpp"
#include "analysis/report/table.hpp"

namespace commsgd::report {

struct PaperValue {
  std::string source;    // the paper's table, figure or section: "Table 3", "Figure 5"
  std::string quantity;  // "scaling efficiency", "top-1 accuracy", ...
  std::string model, algo;
  std::optional<std::int64_t> workers;
  double value = 0;
  std::string unit, note;
};

struct PaperClaim {
  std::string key, text, source;
};

struct Paper {
  std::string key;         // gtopk, gaussiank, sgp
  std::string short_name;  // "gTop-k S-SGD"
  std::string title, authors, venue, arxiv, code, setting;
  std::string sources;  // where the values could be read, and what could not be checked
  std::vector<PaperValue> values;
  std::vector<PaperClaim> claims;

  // Throws InputError naming the paper and the known keys.
  const PaperClaim& claim(std::string_view key) const;
};

// Parsed once from the embedded file; a malformed file is this build's own error (logic_error).
const std::vector<Paper>& papers();
// Throws InputError naming the known papers.
const Paper& paper(std::string_view key);
// A paper's values, one row each: source, quantity, model, algo, workers, value, unit, note.
Table paper_values_table(const Paper& p);
// Every paper's values, the same columns after the paper's key (paper).
Table paper_values_table();
// paper_values_table() as the TEMP table paper_values on `db` (before it refuses writes).
void install_paper_values(const Connection& db);

}  // namespace commsgd::report
