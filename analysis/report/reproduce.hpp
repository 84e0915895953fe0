// commsgd-report reproduce: a results page written from its spec (results/*/page.toml), the run
// or benchmark databases the spec names and, for a paper, results/papers.toml. Every figure on
// the page is the output of a commsgd-report command over a committed database, so the page can
// be made again and checked for drift; the only prose is the spec's, and it quotes no figure.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace commsgd::report {

// One table of the page: the output of `command` (commsgd-report's arguments, to which the
// database and `-f markdown` are added) over the database named `database`.
struct PageSection {
  std::string heading, text, database;
  std::vector<std::string> command;
  std::vector<std::string> figures;  // image files, relative to the page
};

// A claim of the paper and how this page decides it: `check`, a query over `database` giving
// one row (verdict 'holds' or 'differs', evidence), with `differs_because` said when it
// differs, and `scale`, a query over the same database giving the workers, device, network,
// model and dataset of each run the verdict rests on, so that the verdict says the scale it was
// decided at; or, where nothing here can test it, `not_testable`, the reason.
struct PageClaim {
  std::string key, database, check, scale, differs_because, not_testable;
  std::vector<std::string> fidelity;  // rows of configs/papers/FIDELITY.md that apply
};

struct PageSpec {
  std::filesystem::path file;  // the spec, as given
  std::string page;            // where the page lives, relative to the repository root
  std::string title, paper, remake, about, reading;
  std::map<std::string, std::string> databases;  // name -> path relative to the repository root
  std::vector<std::string> summarize;            // paper pages' specs whose claims an index lists
  std::vector<PageSection> sections;
  std::vector<PageClaim> claims;
};

// Throws InputError with one line naming the file and the key that is wrong.
PageSpec read_page_spec(const std::filesystem::path& file);

// Runs one commsgd-report command in this process and returns what it printed.
using ReportRunner = std::function<std::string(const std::vector<std::string>& args)>;

// The page, in Markdown. Databases are read under `root`, except those in `database_at`
// (name -> path, e.g. a copy elsewhere); the page names each by its path in the spec either way,
// so a page made from a copy is the committed page byte for byte.
std::string render_page(const PageSpec& spec, const std::filesystem::path& root,
                        const std::map<std::string, std::filesystem::path>& database_at,
                        const ReportRunner& run);

}  // namespace commsgd::report
