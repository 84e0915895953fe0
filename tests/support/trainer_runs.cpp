#include "tests/support/trainer_runs.hpp"

#include <sqlite3.h>

#include <cmath>
#include <fstream>

namespace commsgd::testing {

namespace fs = std::filesystem;

void TrainerRuns::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  dir_ = fs::temp_directory_path() / ("commsgd_" + name);
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

void TrainerRuns::TearDown() {
  fs::remove_all(dir_);
}

ProcessResult TrainerRuns::train(int ranks, std::vector<std::string> args) {
  return train_with(COMMSGD_TRAIN, ranks, std::move(args));
}

ProcessResult TrainerRuns::train_with(const std::string& program, int ranks,
                                      std::vector<std::string> args) {
  args.insert(args.begin(), program);
  args.push_back("--quiet");
  return run_process(mpirun(ranks, args), std::chrono::seconds(540));
}

std::vector<std::string> digits_mlp_flags(const std::string& db) {
  return {"--dataset",    "csv", "--data-path", COMMSGD_DIGITS_CSV,
          "--model",      "mlp", "--epochs",    "12",
          "--batch-size", "16",  "--lr",        "0.05",
          "--db",         db};
}

std::vector<std::vector<std::string>> query(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << db;
  sqlite3_busy_timeout(handle, 10000);  // a trainer may be writing it right now
  std::vector<std::vector<std::string>> rows;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(handle);
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const auto* text = sqlite3_column_text(stmt, c);
      row.emplace_back(text ? reinterpret_cast<const char*>(text) : "NULL");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return rows;
}

bool has_rows(const fs::path& db, const std::string& table) {
  if (!fs::exists(db)) return false;
  sqlite3* handle = nullptr;
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "select count(*) from " + table;
  bool rows = false;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    rows = sqlite3_column_int64(stmt, 0) > 0;
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return rows;
}

std::vector<float> read_floats(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> values(fs::file_size(path) / sizeof(float));
  in.read(reinterpret_cast<char*>(values.data()),
          static_cast<std::streamsize>(values.size() * sizeof(float)));
  return values;
}

double relative_distance(const std::vector<float>& x, const std::vector<float>& reference) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    diff += (double(x[i]) - reference[i]) * (double(x[i]) - reference[i]);
    norm += double(reference[i]) * reference[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace commsgd::testing
