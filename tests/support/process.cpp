#include "tests/support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace commsgd::testing {

Process::Process(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    setpgid(0, 0);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);
  close(pipe_fds[1]);
  output_fd_ = pipe_fds[0];
}

Process::~Process() {
  if (!waited_) wait(std::chrono::seconds(0));
}

std::vector<pid_t> Process::children() const {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string pid, command, state;
    pid_t parent = 0;
    // Fields: pid (comm) state ppid ...; comm has no spaces for the programs tests start.
    if (stat >> pid >> command >> state >> parent && parent == pid_) {
      found.push_back(static_cast<pid_t>(std::stol(pid)));
    }
  }
  return found;
}

ProcessResult Process::wait(std::chrono::seconds timeout) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-pid_, SIGKILL);
      break;
    }
    pollfd fd{output_fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(output_fd_, buffer, sizeof(buffer));
    if (n <= 0) break;  // every writer closed: the launch is over
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(output_fd_);
  int status = 0;
  waitpid(pid_, &status, 0);
  waited_ = true;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  return Process(argv).wait(timeout);
}

std::vector<std::string> mpirun_base() {
  // mpirun follows its SIGTERM with SIGKILL after odls_base_sigkill_timeout (default 1 s): on a
  // loaded 2-core machine that can come before a rank has recorded its run failed. 3 s (Slurm's
  // KillWait is 30 s); mpirun waits it out in full on every failure, so not more.
  std::vector<std::string> argv = {
      COMMSGD_MPIEXEC, "--oversubscribe",           "--bind-to", "none", "-x", "OMP_NUM_THREADS=1",
      "--mca",         "odls_base_sigkill_timeout", "3"};
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  return argv;
}

std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> argv = mpirun_base();
  argv.insert(argv.end(), {"-np", std::to_string(ranks)});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace commsgd::testing
