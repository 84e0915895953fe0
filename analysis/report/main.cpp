// commsgd-report: tables and figures over commsgd run databases. Exit codes: 0 done, 2 bad input
// (one line on stderr names the problem), 1 anything else (e.g. the plotting script failed).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "analysis/record/run_database.hpp"
#include "analysis/report/commands.hpp"
#include "analysis/report/sqlite.hpp"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitFailed = 1;

int fail(int code, std::string_view message) {
  fmt::print(stderr, "commsgd-report: error: {}\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Tables and figures over commsgd run databases: list, compare and scale runs, merge and "
      "export databases, or run SQL over the tables and views (analysis/README.md).");
  app.name("commsgd-report");
  app.require_subcommand(1);
  commsgd::report::add_commands(app);
  // CLI11 calls an unknown command a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    try {
      app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      return fail(kExitBadInput,
                  fmt::format("unknown command '{}'; see commsgd-report --help", argv[1]));
    }
  }
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return fail(kExitBadInput, e.what());
  } catch (const commsgd::report::InputError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const commsgd::record::DatabaseError& e) {  // the output of merge
    return fail(kExitBadInput, e.what());
  } catch (const std::exception& e) {
    return fail(kExitFailed, e.what());
  }
}
