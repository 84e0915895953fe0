#include "analysis/report/papers.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <stdexcept>

#include "commsgd/report/papers_toml.hpp"

namespace commsgd::report {
namespace {

// A key every entry must have; the file is this build's own, so a missing one is a logic error.
std::string required(const toml::table& t, std::string_view key, std::string_view where) {
  const auto value = t[key].value<std::string>();
  if (!value) {
    throw std::logic_error(fmt::format("results/papers.toml: {} has no string '{}'", where, key));
  }
  return *value;
}

std::string optional_text(const toml::table& t, std::string_view key) {
  return t[key].value_or(std::string{});
}

PaperValue read_value(const toml::table& t, std::string_view where) {
  PaperValue v;
  v.source = required(t, "source", where);
  v.quantity = required(t, "quantity", where);
  v.model = optional_text(t, "model");
  v.algo = optional_text(t, "algo");
  if (const auto workers = t["workers"].value<std::int64_t>()) v.workers = *workers;
  const auto value = t["value"].value<double>();  // integers convert
  if (!value) throw std::logic_error(fmt::format("results/papers.toml: {} has no value", where));
  v.value = *value;
  v.unit = required(t, "unit", where);
  v.note = optional_text(t, "note");
  return v;
}

Paper read_paper(std::string key, const toml::table& t) {
  Paper p;
  p.key = std::move(key);
  for (auto [field, name] : {std::pair{&p.short_name, "short"},
                             {&p.title, "title"},
                             {&p.authors, "authors"},
                             {&p.venue, "venue"},
                             {&p.arxiv, "arxiv"},
                             {&p.code, "code"},
                             {&p.setting, "setting"},
                             {&p.sources, "sources"}}) {
    *field = required(t, name, p.key);
  }
  if (const toml::array* values = t["value"].as_array()) {
    for (const toml::node& v : *values) {
      p.values.push_back(
          read_value(*v.as_table(), fmt::format("{}.value[{}]", p.key, p.values.size())));
    }
  }
  if (const toml::array* claims = t["claim"].as_array()) {
    for (const toml::node& c : *claims) {
      const std::string where = fmt::format("{}.claim[{}]", p.key, p.claims.size());
      p.claims.push_back({required(*c.as_table(), "key", where),
                          required(*c.as_table(), "text", where),
                          required(*c.as_table(), "source", where)});
    }
  }
  return p;
}

std::vector<Paper> parse_papers() {
  toml::table file;
  try {
    file = toml::parse(kPapersToml, std::string_view("results/papers.toml"));
  } catch (const toml::parse_error& e) {
    throw std::logic_error(fmt::format("results/papers.toml: {}", e.description()));
  }
  std::vector<Paper> all;
  for (const auto& [key, node] : file) {
    if (!node.is_table()) {
      throw std::logic_error(fmt::format("results/papers.toml: '{}' is not a paper", key.str()));
    }
    all.push_back(read_paper(std::string(key.str()), *node.as_table()));
  }
  return all;
}

// "a, b, c": the keys of papers or of claims, for an error that lists the known ones.
template <class Keyed>
std::string keys_of(const std::vector<Keyed>& items) {
  std::vector<std::string> keys;
  for (const Keyed& item : items) keys.push_back(item.key);
  return fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace

const PaperClaim& Paper::claim(std::string_view wanted) const {
  for (const PaperClaim& c : claims) {
    if (c.key == wanted) return c;
  }
  throw InputError(
      fmt::format("paper {} has no claim '{}' (its claims: {})", key, wanted, keys_of(claims)));
}

const std::vector<Paper>& papers() {
  static const std::vector<Paper> all = parse_papers();
  return all;
}

const Paper& paper(std::string_view key) {
  for (const Paper& p : papers()) {
    if (p.key == key) return p;
  }
  throw InputError(fmt::format("no paper '{}' (the papers: {})", key, keys_of(papers())));
}

Table paper_values_table(const Paper& p) {
  Table t{{"source", "quantity", "model", "algo", "workers", "value", "unit", "note"}, {}};
  const auto text_or_null = [](const std::string& s) { return s.empty() ? Value{} : Value{s}; };
  for (const PaperValue& v : p.values) {
    t.rows.push_back({v.source, v.quantity, text_or_null(v.model), text_or_null(v.algo),
                      v.workers ? Value{*v.workers} : Value{}, v.value, v.unit,
                      text_or_null(v.note)});
  }
  return t;
}

Table paper_values_table() {
  Table all;
  for (const Paper& p : papers()) {
    Table one = paper_values_table(p);
    if (all.columns.empty()) {
      all.columns = one.columns;
      all.columns.insert(all.columns.begin(), "paper");
    }
    for (Row& row : one.rows) {
      row.insert(row.begin(), p.key);
      all.rows.push_back(std::move(row));
    }
  }
  return all;
}

void install_paper_values(const Connection& db) {
  db.exec(
      "CREATE TEMP TABLE paper_values (paper TEXT NOT NULL, source TEXT NOT NULL, quantity TEXT "
      "NOT NULL, model TEXT, algo TEXT, workers INTEGER, value REAL NOT NULL, unit TEXT NOT NULL, "
      "note TEXT)");
  Statement insert(db, "INSERT INTO paper_values VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const Row& row : paper_values_table().rows) {
    insert.bind(row);
    insert.step();
  }
}

}  // namespace commsgd::report
