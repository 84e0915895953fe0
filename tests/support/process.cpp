#include "tests/support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace commsgd::testing {
namespace {

bool starts_with_any(std::string_view variable, std::initializer_list<std::string_view> prefixes) {
  for (const std::string_view prefix : prefixes) {
    if (variable.starts_with(prefix)) return true;
  }
  return false;
}

// Open MPI's settings as the process was started with them (the user's, ctest's): taken before
// main, so before MPI_Init adds its own.
const std::vector<std::string> mca_settings_at_start = [] {
  std::vector<std::string> settings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::string_view(*entry).starts_with("OMPI_MCA_")) settings.emplace_back(*entry);
  }
  return settings;
}();

// Open MPI 4 keeps the session directory of every job on a host under one
// <tmp>/ompi.<host>.<uid>, made by the first job to start and removed by the last to end: a job
// (an mpirun, or a process started alone, a singleton) starting at either moment can fail to make
// its own directory there, and exits 1 (open-mpi/ompi#8510). ctest runs tests side by side, and
// some tests start processes at once, so each process started gets a base of its own, under one
// for this process that goes when this process ends. tests/CMakeLists.txt does the same for the
// tests ctest starts.
class SessionBases {
 public:
  SessionBases() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "commsgd-mpi-sessions.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
    root_ = pattern;
  }
  ~SessionBases() {
    std::error_code ignored;  // a child killed mid-run may leave files; nothing to report at exit
    std::filesystem::remove_all(root_, ignored);
  }
  SessionBases(const SessionBases&) = delete;
  SessionBases& operator=(const SessionBases&) = delete;

  std::string next() {
    const std::filesystem::path base = root_ / std::to_string(children_++);
    std::filesystem::create_directory(base);
    return base.string();
  }

 private:
  std::filesystem::path root_;
  std::atomic<int> children_{0};
};

std::string session_base_for_next_child() {
  static SessionBases bases;
  return bases.next();
}

// The environment for the child. A process that initialized MPI (a benchmark, a singleton) has
// the variables MPI_Init set for its own job; an mpirun started with them takes itself for part
// of that job, and exits 1 without a word. What the process was started with stays, but for the
// session base, which is the child's own.
std::vector<std::string> environment_for_child() {
  constexpr std::string_view kSessionBase = "OMPI_MCA_orte_tmpdir_base=";
  std::vector<std::string> kept;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string variable(*entry);
    const bool set_by_mpi_init =
        starts_with_any(variable, {"PMIX_", "OPAL_", "PRTE_"}) ||
        (variable.starts_with("OMPI_") && !variable.starts_with("OMPI_ALLOW_RUN_AS_ROOT") &&
         std::find(mca_settings_at_start.begin(), mca_settings_at_start.end(), variable) ==
             mca_settings_at_start.end());
    if (!set_by_mpi_init && !variable.starts_with(kSessionBase)) kept.push_back(variable);
  }
  kept.push_back(std::string(kSessionBase) + session_base_for_next_child());
  return kept;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv) {
  // Everything the child needs is built before fork: the parent may have threads, and the child
  // may not allocate.
  std::vector<std::string> arguments = argv, environment = environment_for_child();
  const std::vector<char*> args = pointers_to(arguments), envp = pointers_to(environment);
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
    execvpe(args[0], args.data(), envp.data());
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
