#include "analysis/record/writer_claim.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>

namespace commsgd::record {
namespace {

namespace fs = std::filesystem;

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// The claim's text: "run ID", "host NAME", "pid N", "since TIME", a line each.
std::string claim_text(std::string_view run_id) {
  return fmt::format("run {}\nhost {}\npid {}\nsince {}\n", run_id, this_host(), getpid(),
                     utc_now_iso8601());
}

// The value of the line "KEY value", or "" if there is none.
std::string field(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ')
      return line.substr(key.size() + 1);
  }
  return "";
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A claim of this host whose process is gone: its run was killed before it could remove it.
bool stale(const std::string& claim) {
  const std::string pid = field(claim, "pid");
  pid_t id = 0;
  if (field(claim, "host") != this_host() ||
      std::from_chars(pid.data(), pid.data() + pid.size(), id).ec != std::errc{} || id <= 0)
    return false;
  return kill(id, 0) != 0 && errno == ESRCH;
}

bool create_exclusively(const fs::path& file, const std::string& text) {
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw DatabaseError(fmt::format("{}: cannot create: {}", file.string(),
                                    std::generic_category().message(errno)));
  }
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(file.c_str());
    throw DatabaseError(fmt::format("{}: cannot write", file.string()));
  }
  return true;
}

}  // namespace

fs::path writer_claim_file(const fs::path& database) {
  fs::path file = database;
  file += ".writer";
  return file;
}

WriterClaim::WriterClaim(const fs::path& database, std::string_view run_id)
    : file_(writer_claim_file(database)) {
  const std::string mine = claim_text(run_id);
  if (create_exclusively(file_, mine)) return;
  const std::string held = read_text(file_);
  if (stale(held)) {
    std::error_code ec;
    fs::remove(file_, ec);
    if (create_exclusively(file_, mine)) return;
  }
  throw DatabaseClaimed(fmt::format(
      "{}: run {} (host {}, pid {}, since {}) is writing this database, and on a network file "
      "system SQLite cannot keep two runs in one file safe; give each run a file of its own "
      "(--db-dir, then commsgd-report merge), or remove {} if that run is gone",
      database.string(), field(held, "run"), field(held, "host"), field(held, "pid"),
      field(held, "since"), file_.string()));
}

WriterClaim::~WriterClaim() {
  std::error_code ec;
  fs::remove(file_, ec);
}

void release_writer_claim(const fs::path& database) {
  const fs::path file = writer_claim_file(database);
  const std::string held = read_text(file);
  if (field(held, "host") == this_host() && field(held, "pid") == std::to_string(getpid())) {
    std::error_code ec;
    fs::remove(file, ec);
  }
}

}  // namespace commsgd::record
