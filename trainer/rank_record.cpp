#include "trainer/rank_record.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <string_view>

#include "trainer/run_info.hpp"

namespace commsgd::trainer {
namespace {

// One rank's stamp as it travels: fixed-size text fields, so one allgather carries them all.
struct Stamp {
  std::array<char, 64> host{};
  std::array<char, 32> started_at{}, finished_at{};
  std::int64_t peak_rss_bytes = -1;  // -1: none
};

template <std::size_t N>
void copy_text(const std::string& text, std::array<char, N>& field) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::copy_n(text.begin(), n, field.begin());
}

template <std::size_t N>
std::string text_of(const std::array<char, N>& field) {
  return std::string(field.data(), std::find(field.begin(), field.end(), '\0'));
}

}  // namespace

std::optional<std::int64_t> peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    constexpr std::string_view key = "VmHWM:";
    if (line.starts_with(key)) return std::stoll(line.substr(key.size())) * 1024;  // in kB
  }
  return std::nullopt;
}

std::vector<record::RankRow> gather_ranks(comm::Communicator& comm, const std::string& started_at,
                                          bool finished) {
  Stamp mine;
  copy_text(host_name(), mine.host);
  copy_text(started_at, mine.started_at);
  if (finished) {
    copy_text(record::utc_now_iso8601(), mine.finished_at);
    mine.peak_rss_bytes = peak_rss_bytes().value_or(-1);
  }
  std::vector<Stamp> all(static_cast<std::size_t>(comm.size()));
  comm.allgather(&mine, all.data(), sizeof(Stamp));
  std::vector<record::RankRow> rows;
  for (std::size_t r = 0; r < all.size(); ++r) {
    record::RankRow row{static_cast<int>(r), text_of(all[r].started_at), text_of(all[r].host),
                        std::nullopt, std::nullopt};
    if (finished) row.finished_at = text_of(all[r].finished_at);
    if (all[r].peak_rss_bytes >= 0) row.peak_rss_bytes = all[r].peak_rss_bytes;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace commsgd::trainer
