#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace commsgd::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH) in its own process group, capturing its output. A process
// still running at the deadline is killed with its whole group, so a hung launch fails the test
// instead of hanging the suite.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout);

// mpirun and the flags a test on one machine needs (root, more ranks than cores).
std::vector<std::string> mpirun_base();

// mpirun with the flags a test on one machine needs (root, more ranks than cores), then `args`.
std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& args);

}  // namespace commsgd::testing
