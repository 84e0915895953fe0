#include "analysis/report/reproduce.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "analysis/report/database.hpp"
#include "analysis/report/format.hpp"
#include "analysis/report/papers.hpp"

namespace commsgd::report {
namespace {

namespace fs = std::filesystem;

// Reads one spec table, refusing keys it does not know (a misspelt key would otherwise vanish).
class SpecTable {
 public:
  SpecTable(const toml::table& t, std::string where, const fs::path& file,
            std::set<std::string_view> known)
      : t_(t), where_(std::move(where)), file_(file) {
    for (const auto& [key, node] : t_) {
      if (!known.contains(key.str())) fail(fmt::format("unknown key '{}'", key.str()));
    }
  }

  std::string text(std::string_view key, bool required) const {
    const toml::node_view<const toml::node> node = t_[key];
    if (!node) {
      if (required) fail(fmt::format("'{}' is missing", key));
      return {};
    }
    if (!node.is_string()) fail(fmt::format("'{}' must be a string", key));
    return *node.value<std::string>();
  }

  std::vector<std::string> texts(std::string_view key) const {
    std::vector<std::string> all;
    const toml::node_view<const toml::node> node = t_[key];
    if (!node) return all;
    const toml::array* array = node.as_array();
    if (array == nullptr) fail(fmt::format("'{}' must be an array of strings", key));
    for (const toml::node& item : *array) {
      if (!item.is_string()) fail(fmt::format("'{}' must be an array of strings", key));
      all.push_back(*item.value<std::string>());
    }
    return all;
  }

  // The tables of an array of tables such as [[section]].
  std::vector<const toml::table*> tables(std::string_view key) const {
    std::vector<const toml::table*> all;
    const toml::node_view<const toml::node> node = t_[key];
    if (!node) return all;
    const toml::array* array = node.as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      fail(fmt::format("'{}' must be an array of tables ([[{}]])", key, key));
    }
    for (const toml::node& item : *array) all.push_back(item.as_table());
    return all;
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw InputError(
        fmt::format("{}: {}{}", file_.string(), where_.empty() ? "" : where_ + ": ", what));
  }

 private:
  const toml::table& t_;
  std::string where_;
  const fs::path& file_;
};

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \n");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \n") - first + 1));
}

// How a reader types the command from the repository root. A query stays in the spec: quoted
// whole it would be a paragraph of SQL in the middle of the page.
std::string shown_command(const std::vector<std::string>& args, const std::string& database,
                          const PageSpec& spec) {
  std::string shown = "commsgd-report";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i == 1 && args[0] == "sql") {
      shown += " QUERY";
    } else if (a.find_first_of(" '\"$*?") != std::string::npos) {
      shown += " '" + a + "'";
    } else {
      shown += " " + a;
    }
  }
  shown += " " + database;
  if (!args.empty() && args[0] == "sql") {
    return fmt::format("`{}` (QUERY: this section's `command` in {})", shown, spec.file.string());
  }
  return fmt::format("`{}`", shown);
}

std::string table_markdown(const Table& t) {
  std::ostringstream out;
  write_table(out, t, Format::markdown);
  return out.str();
}

// A link from the page to a file of the repository.
std::string link_from_page(const PageSpec& spec, const std::string& target) {
  return fs::path(target).lexically_relative(fs::path(spec.page).parent_path()).generic_string();
}

// The databases a spec names, each opened once: under `root`, or where `database_at` says.
class Databases {
 public:
  Databases(const PageSpec& spec, const fs::path& root,
            const std::map<std::string, fs::path>& database_at)
      : spec_(spec), root_(root), database_at_(database_at) {}

  fs::path path(const std::string& name) const {
    const auto given = database_at_.find(name);
    if (given != database_at_.end()) return given->second;
    return root_ / spec_.databases.at(name);
  }

  const Connection& get(const std::string& name) {
    auto open = open_.find(name);
    if (open == open_.end()) open = open_.emplace(name, open_for_report({path(name)})).first;
    return open->second;
  }

 private:
  const PageSpec& spec_;
  const fs::path& root_;
  const std::map<std::string, fs::path>& database_at_;
  std::map<std::string, Connection> open_;
};

// How a paper writes a model or a data set that commsgd names by its --model or --dataset
// value. A name not here is written as the scale query gives it: a query names the data set
// itself where the recorded name is ambiguous (the mnist loader reads Fashion-MNIST too).
std::string paper_name(std::string_view name) {
  static const std::map<std::string_view, std::string_view> names = {
      {"mlp", "MLP"},
      {"lenet", "LeNet-5"},
      {"resnet20", "ResNet-20"},
      {"resnet32", "ResNet-32"},
      {"resnet56", "ResNet-56"},
      {"vgg16", "VGG-16"},
      {"resnet50", "ResNet-50"},
      {"alexnet", "AlexNet"},
      {"lstm", "LSTM"},
      {"torchscript", "a TorchScript model"},
      {"cifar10", "CIFAR-10"},
      {"mnist", "MNIST"},
      {"csv", "CSV data"},
      {"synthetic", "synthetic data"},
      {"image-folder", "an image folder"},
      {"ptb", "PTB"}};
  const auto found = names.find(name);
  return std::string(found == names.end() ? name : found->second);
}

// A run's network label in words. Emulated links say their rate, which the label gives as tc
// writes it ("emulated:1gbit" is "emulated 1 Gbit/s"); a real network is named by its profile
// (jobs/network/profile.sh), and the run records no rate for it; local is no shaped link at all.
std::string network_words(std::string_view label) {
  if (label == "local") return "unshaped local network";
  if (label == "ethernet") return "real Ethernet";
  if (label == "infiniband") return "real InfiniBand";
  constexpr std::string_view emulated = "emulated:";
  if (!label.starts_with(emulated)) return fmt::format("network '{}'", label);
  static const std::map<std::string_view, std::string_view> per_second = {
      {"bit", "bit/s"},   {"kbit", "kbit/s"}, {"mbit", "Mbit/s"},
      {"gbit", "Gbit/s"}, {"tbit", "Tbit/s"},
  };
  const std::string_view rate = label.substr(emulated.size());
  const std::size_t unit = std::min(rate.find_first_not_of("0123456789."), rate.size());
  const auto words = unit == 0 ? per_second.end() : per_second.find(rate.substr(unit));
  if (words == per_second.end()) return fmt::format("emulated {}", rate);
  return fmt::format("emulated {} {}", rate.substr(0, unit), words->second);
}

std::string device_words(const std::string& device) {
  if (device == "cpu") return "CPU";
  if (device.starts_with("cuda")) return "GPU";  // cuda or cuda:N: which GPU is no part of scale
  return device;
}

// The scale a verdict was decided at, in the terms a paper states its own in: "P = 4, 8 (CPU,
// emulated 1 Gbit/s, LeNet-5 on Fashion-MNIST)", from a claim's scale query, one row per run
// the verdict rests on. A NULL network, model or dataset is none: a benchmark in one process
// trains nothing and uses no network.
std::string scale_of(const Table& t, const std::string& where) {
  const std::vector<std::string> columns = {"workers", "device", "network", "model", "dataset"};
  if (t.columns != columns) {
    throw InputError(
        fmt::format("{}: scale must give the columns ({}), one row per run the verdict rests "
                    "on; it gave ({})",
                    where, fmt::join(columns, ", "), fmt::join(t.columns, ", ")));
  }
  if (t.rows.empty()) throw InputError(fmt::format("{}: scale gave no runs", where));
  std::set<std::int64_t> workers;
  std::set<std::string> devices, networks, workloads;
  for (const Row& row : t.rows) {
    const auto* p = std::get_if<std::int64_t>(&row[0]);
    const auto* device = std::get_if<std::string>(&row[1]);
    if (p == nullptr || *p < 1 || device == nullptr) {
      throw InputError(fmt::format(
          "{}: scale must give each run's workers as a count and its device as text", where));
    }
    workers.insert(*p);
    devices.insert(device_words(*device));
    if (const auto* network = std::get_if<std::string>(&row[2])) {
      networks.insert(network_words(*network));
    }
    const auto* model = std::get_if<std::string>(&row[3]);
    const auto* dataset = std::get_if<std::string>(&row[4]);
    if (model != nullptr && dataset != nullptr) {
      workloads.insert(paper_name(*model) + " on " + paper_name(*dataset));
    } else if (model != nullptr || dataset != nullptr) {
      workloads.insert(paper_name(model != nullptr ? *model : *dataset));
    }
  }
  std::vector<std::string> setting = {fmt::format("{}", fmt::join(devices, " and "))};
  for (const std::set<std::string>* part : {&networks, &workloads}) {
    if (!part->empty()) setting.push_back(fmt::format("{}", fmt::join(*part, " and ")));
  }
  return fmt::format("P = {} ({})", fmt::join(workers, ", "), fmt::join(setting, ", "));
}

struct Verdict {
  std::string verdict;  // holds, differs, not testable here
  std::string scale;    // the scale it was decided at (scale_of); none where it was not tested
  std::string why;      // the evidence, with the reason where it differs or cannot be tested
};

// The verdict as the page and the index show it: a reader who quotes it quotes its scale too.
std::string shown(const Verdict& v) {
  if (v.scale.empty()) return fmt::format("**{}**", v.verdict);
  return fmt::format("**{}** at {}", v.verdict, markdown_cell(v.scale));
}

// A claim's verdict: its check's, at the scale of the runs it rests on, with the reason when it
// differs; or not testable and why.
Verdict decide(const PageSpec& spec, const PageClaim& pc, Databases& databases) {
  if (!pc.not_testable.empty()) return {"not testable here", "", trimmed(pc.not_testable)};
  const std::string where = fmt::format("{}: claim '{}'", spec.file.string(), pc.key);
  const auto query = [&](const std::string& sql, std::string_view what) {
    try {
      return databases.get(pc.database).query(sql);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}: {}", where, what, e.what()));
    }
  };
  const Table t = query(pc.check, "check");
  if (t.rows.size() != 1 || t.columns.size() != 2) {
    throw InputError(
        fmt::format("{}: check must give one row of (verdict, evidence), gave {} "
                    "rows of {} columns",
                    where, t.rows.size(), t.columns.size()));
  }
  const auto* verdict = std::get_if<std::string>(&t.rows[0][0]);
  const auto* evidence = std::get_if<std::string>(&t.rows[0][1]);
  if (verdict == nullptr || (*verdict != "holds" && *verdict != "differs") || !evidence) {
    throw InputError(
        fmt::format("{}: check must give the verdict 'holds' or 'differs' and the "
                    "evidence as text",
                    where));
  }
  const std::string scale = scale_of(query(pc.scale, "scale"), where);
  if (*verdict == "holds") return {*verdict, scale, *evidence};
  if (pc.differs_because.empty()) {
    throw InputError(
        fmt::format("{}: the check says it differs ({}), and differs_because does "
                    "not say why",
                    where, *evidence));
  }
  return {*verdict, scale, fmt::format("{} ({})", trimmed(pc.differs_because), *evidence)};
}

class PageWriter {
 public:
  PageWriter(const PageSpec& spec, const fs::path& root,
             const std::map<std::string, fs::path>& database_at, const ReportRunner& run)
      : spec_(spec), root_(root), databases_(spec, root, database_at), run_(run) {}

  std::string write() {
    out_ += fmt::format(
        "<!-- Written by `commsgd-report reproduce {}` from the databases it names{}: edit that "
        "file{}, or remake the databases, and write the page again. -->\n\n",
        spec_.file.string(), spec_.paper.empty() ? "" : " and results/papers.toml",
        spec_.paper.empty() ? "" : " or results/papers.toml");
    out_ += fmt::format("# {}\n\n", spec_.title);
    if (!spec_.about.empty()) out_ += trimmed(spec_.about) + "\n\n";
    out_ += fmt::format("To make it again: {}.\n\n", trimmed(spec_.remake));
    if (!spec_.summarize.empty()) write_summary();
    if (!spec_.paper.empty()) write_paper();
    for (const PageSection& s : spec_.sections) write_section(s);
    if (!spec_.reading.empty()) {
      out_ += "## Reading (hand-written)\n\n";
      out_ += trimmed(spec_.reading) + "\n";
    }
    while (out_.ends_with("\n\n")) out_.pop_back();
    return out_;
  }

 private:
  // The claims of the pages the spec summarizes, each with its verdict and a link to the page,
  // as those pages' committed databases give them.
  void write_summary() {
    out_ += "## The papers' claims, here\n\n";
    out_ += "| paper | the paper's claim | here | page |\n|---|---|---|---|\n";
    const std::map<std::string, fs::path> committed;
    for (const std::string& file : spec_.summarize) {
      const PageSpec page = read_page_spec(root_ / file);
      if (page.paper.empty()) {
        throw InputError(fmt::format("{}: {} is not a paper's page", spec_.file.string(), file));
      }
      const Paper& p = paper(page.paper);
      Databases databases(page, root_, committed);
      for (const PageClaim& pc : page.claims) {
        const Verdict v = decide(page, pc, databases);
        out_ += fmt::format("| {} | {} | {} | [{}]({}) |\n", p.short_name,
                            markdown_cell(p.claim(pc.key).text), shown(v),
                            fs::path(page.page).parent_path().filename().string(),
                            link_from_page(spec_, page.page));
      }
    }
    out_ += "\n";
  }

  void write_paper() {
    const Paper& p = paper(spec_.paper);
    out_ += "## The paper\n\n";
    out_ += fmt::format("{}: *{}*, {}; arXiv [{}](https://arxiv.org/abs/{}); code {}.\n\n",
                        p.authors, p.title, p.venue, p.arxiv, p.arxiv, p.code);
    out_ += trimmed(p.setting) + "\n\n";
    write_claims(p);
    out_ += "### What the paper reports\n\n";
    if (p.values.empty()) {
      out_ += fmt::format("No value of this paper is in results/papers.toml. {}\n\n",
                          trimmed(p.sources));
      return;
    }
    out_ += fmt::format(
        "From results/papers.toml (`commsgd-report papers`; in SQL, the table paper_values), each "
        "value with where it is read. {}\n\n",
        trimmed(p.sources));
    out_ += table_markdown(paper_values_table(p)) + "\n";
  }

  void write_claims(const Paper& p) {
    for (const PaperClaim& c : p.claims) {
      const bool decided =
          std::ranges::any_of(spec_.claims, [&](const PageClaim& pc) { return pc.key == c.key; });
      if (!decided) {
        throw InputError(
            fmt::format("{}: the paper's claim '{}' is not decided (a [[claim]] with "
                        "check or not_testable)",
                        spec_.file.string(), c.key));
      }
    }
    out_ += "### Its claims, tested here\n\n";
    out_ += "| the paper's claim | where | here | why, and the evidence | fidelity |\n";
    out_ += "|---|---|---|---|---|\n";
    for (const PageClaim& pc : spec_.claims) {
      const PaperClaim& c = p.claim(pc.key);
      const Verdict v = decide(spec_, pc, databases_);
      std::string rows;
      for (const std::string& row : pc.fidelity) {
        rows += fmt::format("{}[{}]({})", rows.empty() ? "" : ", ", row,
                            link_from_page(spec_, "configs/papers/FIDELITY.md"));
      }
      out_ += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(c.text),
                          markdown_cell(c.source), shown(v), markdown_cell(v.why), rows);
    }
    out_ += "\n";
  }

  void write_section(const PageSection& s) {
    out_ += fmt::format("## {}\n\n", s.heading);
    if (!s.text.empty()) out_ += trimmed(s.text) + "\n\n";
    if (!s.command.empty()) {
      out_ += shown_command(s.command, spec_.databases.at(s.database), spec_) + ":\n\n";
      std::vector<std::string> args = s.command;
      args.insert(args.end(), {"-f", "markdown", databases_.path(s.database).string()});
      try {
        out_ += run_(args) + "\n";
      } catch (const InputError& e) {
        throw InputError(
            fmt::format("{}: section '{}': {}", spec_.file.string(), s.heading, e.what()));
      }
    }
    for (const std::string& figure : s.figures) {
      out_ += fmt::format("![{}]({})\n\n", figure, figure);
    }
  }

  const PageSpec& spec_;
  const fs::path& root_;
  Databases databases_;
  const ReportRunner& run_;
  std::string out_;
};

}  // namespace

PageSpec read_page_spec(const fs::path& file) {
  toml::table t;
  try {
    t = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw InputError(
        fmt::format("{}: line {}: {}", file.string(), e.source().begin.line, e.description()));
  }
  PageSpec spec;
  spec.file = file;
  const SpecTable top(t, "", file,
                      {"page", "title", "paper", "remake", "about", "reading", "databases",
                       "summarize", "section", "claim"});
  spec.page = top.text("page", true);
  spec.title = top.text("title", true);
  spec.paper = top.text("paper", false);
  spec.remake = top.text("remake", true);
  spec.about = top.text("about", false);
  spec.reading = top.text("reading", false);
  spec.summarize = top.texts("summarize");
  if (const toml::table* databases = t["databases"].as_table()) {
    for (const auto& [name, path] : *databases) {
      if (!path.is_string()) top.fail(fmt::format("databases.{} must be a path", name.str()));
      spec.databases[std::string(name.str())] = *path.value<std::string>();
    }
  }
  const auto known_database = [&](const SpecTable& where, const std::string& name) {
    if (!spec.databases.contains(name)) {
      where.fail(fmt::format("database '{}' is not one of [databases]", name));
    }
  };
  for (const toml::table* s : top.tables("section")) {
    const SpecTable section(*s, fmt::format("section {}", spec.sections.size() + 1), file,
                            {"heading", "text", "database", "command", "figures"});
    PageSection ps{section.text("heading", true), section.text("text", false),
                   section.text("database", false), section.texts("command"),
                   section.texts("figures")};
    if (!ps.command.empty()) known_database(section, ps.database);
    spec.sections.push_back(std::move(ps));
  }
  for (const toml::table* c : top.tables("claim")) {
    const SpecTable claim(
        *c, fmt::format("claim {}", spec.claims.size() + 1), file,
        {"key", "database", "check", "scale", "differs_because", "not_testable", "fidelity"});
    PageClaim pc{claim.text("key", true),
                 claim.text("database", false),
                 claim.text("check", false),
                 claim.text("scale", false),
                 claim.text("differs_because", false),
                 claim.text("not_testable", false),
                 claim.texts("fidelity")};
    if (pc.check.empty() == pc.not_testable.empty()) {
      claim.fail("give either check (with database and scale) or not_testable");
    }
    // A verdict without its scale reads as the paper's, at the paper's scale.
    if (!pc.check.empty() && pc.scale.empty()) {
      claim.fail(
          "'scale' is missing: a check's verdict says the scale it was decided at (a query "
          "giving workers, device, network, model, dataset of the runs it rests on)");
    }
    if (!pc.not_testable.empty() && !pc.scale.empty()) {
      claim.fail("scale goes with check: a claim not testable here was decided at no scale");
    }
    if (!pc.check.empty()) known_database(claim, pc.database);
    spec.claims.push_back(std::move(pc));
  }
  if (!spec.claims.empty() && spec.paper.empty()) top.fail("claims need a paper");
  return spec;
}

std::string render_page(const PageSpec& spec, const fs::path& root,
                        const std::map<std::string, fs::path>& database_at,
                        const ReportRunner& run) {
  for (const auto& [name, path] : database_at) {
    if (!spec.databases.contains(name)) {
      throw InputError(fmt::format("--database {}={}: {} names no database '{}'", name,
                                   path.string(), spec.file.string(), name));
    }
  }
  return PageWriter(spec, root, database_at, run).write();
}

}  // namespace commsgd::report
