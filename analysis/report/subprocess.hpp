// Running a helper program (the plotting script) with data on its stdin.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace commsgd::report {

// Runs argv[0] (a path, not searched in PATH) with `input` on its stdin and this process's stdout
// and stderr; returns its exit status, 128 + the signal when a signal ended it. Throws
// std::runtime_error when it cannot be started.
int run_with_input(const std::vector<std::string>& argv, std::string_view input);

}  // namespace commsgd::report
