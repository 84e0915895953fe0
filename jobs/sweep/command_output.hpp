// Running sbatch: a program started without a shell, its standard output captured.
#pragma once

#include <string>
#include <vector>

namespace commsgd::sweep {

struct CommandResult {
  int exit_code = -1;  // 128 + the signal when a signal ended it
  std::string output;  // standard output; standard error goes to ours
};

// argv[0] is searched in PATH. Throws SweepError when it cannot be started.
CommandResult run_command(const std::vector<std::string>& argv);

}  // namespace commsgd::sweep
