// The views of schema version 4 read each run's figures and overlaps from tables computed when the
// run is recorded (analysis/record/run_figures.*); those of version 3 (views_v3.sql beside this
// file) computed them from the steps, epochs and ranks on every query. On every committed
// database, migrated, both give the same rows.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "analysis/record/run_database.hpp"
#include "tests/support/temp_dir.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
using Rows = std::vector<std::vector<Value>>;

Rows rows_of(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db) << ": " << sql;
  Rows rows;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    std::vector<Value> row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          row.emplace_back(std::int64_t{sqlite3_column_int64(st, c)});
          break;
        case SQLITE_FLOAT:
          row.emplace_back(sqlite3_column_double(st, c));
          break;
        case SQLITE_TEXT:
          row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
          break;
        default:
          row.emplace_back(std::monostate{});
      }
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  return rows;
}

// Equal, a floating-point value up to its last bits: a mean summed in another order.
bool same(const Value& a, const Value& b) {
  if (std::holds_alternative<double>(a) && std::holds_alternative<double>(b)) {
    const double x = std::get<double>(a), y = std::get<double>(b);
    return x == y || std::abs(x - y) <= 1e-12 * std::max(std::abs(x), std::abs(y));
  }
  return a == b;
}

std::string text(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "NULL";
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

// views_v3.sql as TEMP views of `db`'s connection: they hide the file's own of the same names.
void install_version_3_views(sqlite3* db) {
  std::string sql = read_text(fs::path(COMMSGD_SOURCE_DIR) / "tests/report/views_v3.sql");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"DROP VIEW IF EXISTS ", "DROP VIEW IF EXISTS temp."},
        {"CREATE VIEW ", "CREATE TEMP VIEW "}}) {
    for (std::size_t at = sql.find(from); at != std::string::npos;
         at = sql.find(from, at + to.size())) {
      sql.replace(at, from.size(), to);
    }
  }
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
}

std::vector<fs::path> committed_databases() {
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(COMMSGD_SOURCE_DIR) / "results")) {
    if (entry.path().extension() == ".sqlite") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RunFigures, EveryCommittedDatabaseGivesTheRowsOfTheVersion3Views) {
  const std::vector<fs::path> files = committed_databases();
  ASSERT_GE(files.size(), 4u);
  int runs_compared = 0;
  for (const fs::path& committed : files) {
    SCOPED_TRACE(committed.string());
    const TempDir dir;
    const fs::path copy = dir.path() / "copy.sqlite";
    fs::copy_file(committed, copy);
    { const record::RunDatabase migrated(copy); }  // version 4: the figures computed

    sqlite3* current = nullptr;
    sqlite3* before = nullptr;
    ASSERT_EQ(sqlite3_open_v2(copy.c_str(), &current, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_open_v2(copy.c_str(), &before, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    install_version_3_views(before);
    // time_breakdown's other_s is no longer held at 0 from version 5 on (the phases add up to the
    // step: test_breakdown_adds_up), and overlapped communication is a column of its own: the
    // columns compared are the others.
    const std::string breakdown_columns =
        "run_id, data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, total_s, "
        "data_share, forward_backward_share, select_share, communicate_share, wait_share, "
        "update_share";
    for (const char* relation :
         {"run_summary", "throughput", "scaling_efficiency", "time_breakdown", "final_metrics",
          "communication_volume", "run_memory", "run_overlaps", "time_to_accuracy"}) {
      const std::string columns =
          std::string(relation) == "time_breakdown" ? breakdown_columns : "*";
      const std::string sql = "SELECT " + columns + " FROM " + relation + " ORDER BY 1, 2, 3";
      const Rows now = rows_of(current, sql), then = rows_of(before, sql);
      ASSERT_EQ(now.size(), then.size()) << relation;
      for (std::size_t r = 0; r < now.size(); ++r) {
        ASSERT_EQ(now[r].size(), then[r].size()) << relation;
        for (std::size_t c = 0; c < now[r].size(); ++c) {
          EXPECT_TRUE(same(now[r][c], then[r][c]))
              << relation << " row " << r << " column " << c << ": " << text(now[r][c]) << " now, "
              << text(then[r][c]) << " from the version 3 views";
        }
      }
      if (std::string(relation) == "run_summary") runs_compared += static_cast<int>(now.size());
    }
    // simulate check's medians of the steady windows, as it took them from the steps before.
    for (const auto& run : rows_of(current,
                                   "SELECT run_id, communicate_s_median, wait_s_median "
                                   "FROM run_figures WHERE steady_windows > 0")) {
      const std::string id = std::get<std::string>(run[0]);
      const Rows windows = rows_of(before,
                                   "SELECT communicate_s_mean, wait_s_mean "
                                   "FROM steady_steps WHERE run_id = '" +
                                       id + "'");
      for (std::size_t column = 0; column < 2; ++column) {
        std::vector<double> values;
        for (const auto& w : windows) values.push_back(std::get<double>(w[column]));
        std::sort(values.begin(), values.end());
        const std::size_t half = values.size() / 2;
        const double median =
            values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2;
        EXPECT_TRUE(same(run[column + 1], median)) << id << " column " << column;
      }
    }
    sqlite3_close(current);
    sqlite3_close(before);
  }
  EXPECT_GT(runs_compared, 40);
}

// Overlaps kept as runs are recorded, one run at a time and in any order, are the pairs the
// version 3 view finds from all ranks at once: spans that intersect, touch, lie on other hosts,
// never finished (the run's end, or now), or last a year.
TEST(RunFigures, OverlapsRecordedRunByRunAreTheVersion3ViewsPairs) {
  const TempDir dir;
  const fs::path file = dir.path() / "runs.sqlite";
  struct Span {
    const char* run;
    int rank;
    const char* host;
    const char* start;
    std::optional<std::string> end;
  };
  const std::vector<Span> spans = {
      {"r3", 0, "n1", "2026-01-01T11:00:00.000Z", "2026-01-01T11:30:00.000Z"},  // touches r1
      {"r1", 0, "n1", "2026-01-01T10:00:00.000Z", "2026-01-01T11:00:00.000Z"},
      {"r2", 0, "n1", "2026-01-01T10:30:00.000Z", "2026-01-01T12:00:00.000Z"},
      {"r2", 1, "n2", "2026-01-01T10:30:00.000Z", "2026-01-01T12:00:00.000Z"},
      {"r4", 0, "n2", "2026-01-01T09:00:00.000Z", "2026-01-01T10:30:00.000Z"},  // touches r2
      {"r5", 0, "n2", "2026-01-01T12:59:00.000Z", "2026-01-01T14:00:00.000Z"},
      {"r7", 0, "n1", "2025-01-01T00:00:00.000Z", "2025-12-31T00:00:00.000Z"},  // a year
      {"r6", 0, "n1", "2026-01-01T09:00:00.000Z", std::nullopt},                // still running
      {"r8", 0, "n1", "2026-01-01T08:00:00.000Z", std::nullopt},  // its run's end: now
      {"r9", 0, "n3", "2026-01-01T08:00:00.000Z", "2026-01-01T08:00:01.000Z"},  // alone
  };
  {
    record::RunDatabase db(file);
    for (const Span& span : spans) {
      record::RunInfo run;
      run.id = span.run;
      run.algo = "dense";
      if (span.rank == 0) db.begin_run(run);
      const std::vector<record::RankRow> rows = {
          {span.rank, span.start, span.host, span.end, std::nullopt}};
      db.record_ranks(span.run, rows);
      if (std::string(span.run) != "r6" && (span.rank == 1 || std::string(span.run) != "r2"))
        db.finish_run(span.run, record::RunStatus::completed, "");
    }
  }
  sqlite3* current = nullptr;
  sqlite3* before = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &current, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &before, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  install_version_3_views(before);
  const std::string sql = "SELECT run_id, other_run_id, host FROM run_overlaps ORDER BY 1, 2, 3";
  const Rows now = rows_of(current, sql), then = rows_of(before, sql);
  EXPECT_EQ(now, then);
  // On n1: r1-r2, r2-r3, and r6 and r8 with r1, r2, r3 and each other (r7 ended before either
  // began); on n2 touching spans and r2-r5 (12:00 < 12:59) do not overlap. Each in both orders.
  EXPECT_EQ(now.size(), 2u * 9);
  sqlite3_close(current);
  sqlite3_close(before);
}

}  // namespace
}  // namespace commsgd::testing
