#include "analysis/record/peer_failures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <set>
#include <system_error>
#include <tuple>

namespace commsgd::record {
namespace {

namespace fs = std::filesystem;

// RUN.rankN: the run first, so that one run's files sort together.
std::string file_name(std::string_view run_id, int rank) {
  return fmt::format("{}.rank{}", run_id, rank);
}

// The file's four parts, one a line and the reason to the end: "run ID", "rank N", "at TIME",
// then the reason, which may have lines of its own.
std::string serialise(const PeerFailure& f) {
  return fmt::format("run {}\nrank {}\nat {}\n{}", f.run_id, f.rank, f.at, f.reason);
}

std::optional<PeerFailure> parse(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  PeerFailure f;
  std::size_t begin = 0;
  const auto field = [&](std::string_view key) -> std::optional<std::string_view> {
    const std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) return std::nullopt;
    const std::string_view line = std::string_view(text).substr(begin, end - begin);
    begin = end + 1;
    if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ' ')
      return std::nullopt;
    return line.substr(key.size() + 1);
  };
  const auto run = field("run"), rank = field("rank"), at = field("at");
  if (!run || !rank || !at) return std::nullopt;
  if (std::from_chars(rank->data(), rank->data() + rank->size(), f.rank).ec != std::errc{})
    return std::nullopt;
  f.run_id = *run;
  f.at = *at;
  f.reason = text.substr(begin);
  f.file = file;
  return f;
}

// The first failure of each run is its cause; the others followed from it. `failures` is
// earliest first.
int record_earliest(RunDatabase& db, const std::vector<PeerFailure>& failures) {
  std::set<std::string_view> recorded;
  int changed = 0;
  for (const PeerFailure& f : failures) {
    if (!recorded.insert(f.run_id).second) continue;
    changed += db.record_peer_failure(f.run_id, f.at, fmt::format("rank {}: {}", f.rank, f.reason));
  }
  return changed;
}

}  // namespace

fs::path peer_failures_dir(const fs::path& database) {
  fs::path dir = database;
  dir += ".peer-failures";
  return dir;
}

fs::path write_peer_failure(const fs::path& database, const PeerFailure& failure) {
  const fs::path dir = peer_failures_dir(database);
  const fs::path file = dir / file_name(failure.run_id, failure.rank);
  fs::path temporary = file;
  temporary += ".part";
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << serialise(failure);
    out.close();
    if (ec || !out) throw DatabaseError(fmt::format("{}: cannot write", temporary.string()));
  }
  fs::rename(temporary, file, ec);
  if (ec) throw DatabaseError(fmt::format("{}: cannot write: {}", file.string(), ec.message()));
  return file;
}

std::vector<PeerFailure> read_peer_failures(const fs::path& database, std::string_view run_id) {
  std::vector<PeerFailure> failures;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(peer_failures_dir(database), ec)) {
    if (entry.path().extension() == ".part") continue;
    std::optional<PeerFailure> f = parse(entry.path());
    if (f && (run_id.empty() || f->run_id == run_id)) failures.push_back(std::move(*f));
  }
  std::ranges::sort(failures, {}, [](const PeerFailure& f) { return std::tie(f.at, f.rank); });
  return failures;
}

bool fold_peer_failures(RunDatabase& db, const fs::path& database, std::string_view run_id) {
  const std::vector<PeerFailure> failures = read_peer_failures(database, run_id);
  if (failures.empty()) return false;
  const bool changed = record_earliest(db, failures) > 0;
  std::error_code ec;
  for (const PeerFailure& f : failures) fs::remove(f.file, ec);
  fs::remove(peer_failures_dir(database), ec);  // only if empty: another run's may be there
  return changed;
}

int record_peer_failures(RunDatabase& db, const fs::path& source) {
  return record_earliest(db, read_peer_failures(source));
}

}  // namespace commsgd::record
