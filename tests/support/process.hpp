#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace commsgd::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr, interleaved
};

// argv[0] (searched in PATH) started in its own process group, its output captured, with a base
// for Open MPI's session directory of its own (see process.cpp). A process still running at the
// deadline of wait() is killed with its whole group, so a hung launch fails the test instead of
// hanging the suite.
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // The pids of its direct children (the ranks, for a local mpirun).
  std::vector<pid_t> children() const;
  ProcessResult wait(std::chrono::seconds timeout);

 private:
  pid_t pid_ = -1;
  int output_fd_ = -1;
  bool waited_ = false;
};

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout);

// mpirun and the flags a test on one machine needs (root, more ranks than cores).
std::vector<std::string> mpirun_base();

// mpirun with the flags a test on one machine needs (root, more ranks than cores), then `args`.
std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& args);

}  // namespace commsgd::testing
