#include "analysis/report/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace commsgd::report {
namespace {

// Four significant digits, without an exponent for the throughputs and byte counts of a report.
std::string rounded(double v) {
  if (std::isfinite(v) && std::abs(v) >= 1e4) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// `null` is how NULL reads in this format; doubles are rounded unless `exact`.
std::string cell(const Value& v, std::string_view null, bool exact) {
  struct Visitor {
    std::string_view null;
    bool exact;
    std::string operator()(std::monostate) const { return std::string(null); }
    std::string operator()(std::int64_t i) const { return fmt::format("{}", i); }
    std::string operator()(double d) const { return exact ? fmt::format("{}", d) : rounded(d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{null, exact}, v);
}

}  // namespace

std::string value_text(const Value& v) {
  return cell(v, "-", false);
}

namespace {

// Numbers align right; a column is numeric when every non-NULL value in it is.
std::vector<bool> numeric_columns(const Table& t) {
  std::vector<bool> numeric(t.columns.size(), true);
  for (const Row& row : t.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (std::holds_alternative<std::string>(row[c])) numeric[c] = false;
    }
  }
  return numeric;
}

void write_text(std::ostream& out, const Table& t) {
  std::vector<std::vector<std::string>> cells = {t.columns};
  for (const Row& row : t.rows) {
    std::vector<std::string> line;
    for (const Value& v : row) line.push_back(cell(v, "-", false));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> width(t.columns.size(), 0);
  for (const auto& line : cells) {
    for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  const std::vector<bool> numeric = numeric_columns(t);
  auto print = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) {
      if (c > 0) text += "  ";
      text += numeric[c] ? fmt::format("{:>{}}", line[c], width[c])
                         : fmt::format("{:<{}}", line[c], width[c]);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << '\n';
  };
  print(cells[0]);
  std::vector<std::string> rule;
  for (const std::size_t w : width) rule.emplace_back(w, '-');
  print(rule);
  for (std::size_t i = 1; i < cells.size(); ++i) print(cells[i]);
}

void write_markdown(std::ostream& out, const Table& t) {
  const std::vector<bool> numeric = numeric_columns(t);
  std::string header = "|", rule = "|";
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    header += " " + markdown_cell(t.columns[c]) + " |";
    rule += numeric[c] ? " ---: |" : " --- |";
  }
  out << header << '\n' << rule << '\n';
  for (const Row& row : t.rows) {
    std::string line = "|";
    for (const Value& v : row) line += " " + markdown_cell(cell(v, "-", false)) + " |";
    out << line << '\n';
  }
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (const char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

void write_csv(std::ostream& out, const Table& t) {
  auto print = [&](const std::vector<std::string>& fields) {
    for (std::size_t c = 0; c < fields.size(); ++c) out << (c ? "," : "") << csv_field(fields[c]);
    out << '\n';
  };
  print(t.columns);
  for (const Row& row : t.rows) {
    std::vector<std::string> fields;
    for (const Value& v : row) fields.push_back(cell(v, "", true));
    print(fields);
  }
}

void write_json(std::ostream& out, const Table& t) {
  auto rows = nlohmann::ordered_json::array();
  for (const Row& row : t.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      nlohmann::ordered_json& field = object[t.columns[c]];
      std::visit(
          [&](const auto& v) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) field = v;
          },
          row[c]);
    }
    rows.push_back(std::move(object));
  }
  out << rows.dump(2) << '\n';
}

}  // namespace

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') {
      out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

const std::map<std::string, Format>& format_names() {
  static const std::map<std::string, Format> names = {{"text", Format::text},
                                                      {"markdown", Format::markdown},
                                                      {"csv", Format::csv},
                                                      {"json", Format::json}};
  return names;
}

void write_table(std::ostream& out, const Table& table, Format format) {
  switch (format) {
    case Format::text:
      return write_text(out, table);
    case Format::markdown:
      return write_markdown(out, table);
    case Format::csv:
      return write_csv(out, table);
    case Format::json:
      return write_json(out, table);
  }
}

}  // namespace commsgd::report
