#include "tests/support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace commsgd::testing {

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
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
  setpgid(pid, pid);
  close(pipe_fds[1]);

  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;  // every writer closed: the launch is over
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::vector<std::string> mpirun_base() {
  std::vector<std::string> argv = {COMMSGD_MPIEXEC,    "--oversubscribe", "--bind-to", "none", "-x",
                                   "OMP_NUM_THREADS=1"};
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
