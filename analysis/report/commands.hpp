// The subcommands of commsgd-report and their options. Each runs from its CLI11 callback and
// reports bad input by throwing InputError (or CLI::ParseError for malformed options).
#pragma once

#include <CLI/CLI.hpp>

namespace commsgd::report {

void add_commands(CLI::App& app);

}  // namespace commsgd::report
