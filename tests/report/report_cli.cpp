#include "tests/report/report_cli.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace commsgd::testing {

namespace fs = std::filesystem;

ProcessResult report(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  std::istringstream emulator(COMMSGD_REPORT_EMULATOR);
  for (std::string word; emulator >> word;) argv.push_back(word);
  argv.push_back(COMMSGD_REPORT);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, std::chrono::seconds(120));
}

void expect_one_line_error(const ProcessResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(r.output.starts_with("commsgd-report: error: ")) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
  EXPECT_NE(r.output.find(fragment), std::string::npos) << r.output;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

nlohmann::json report_json(std::vector<std::string> args) {
  args.insert(args.end(), {"--format", "json"});
  const ProcessResult r = report(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(r.output);
}

nlohmann::json query_json(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << db;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(handle, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(handle) << "\n"
      << sql;
  nlohmann::json rows = nlohmann::json::array();
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    nlohmann::json row = nlohmann::json::object();
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      nlohmann::json& v = row[sqlite3_column_name(st, c)];
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          v = sqlite3_column_int64(st, c);
          break;
        case SQLITE_FLOAT:
          v = sqlite3_column_double(st, c);
          break;
        case SQLITE_TEXT:
          v = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
          break;
        default:
          break;  // NULL
      }
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  sqlite3_close(handle);
  return rows;
}

std::map<std::string, nlohmann::json> by(const nlohmann::json& rows, const std::string& column) {
  std::map<std::string, nlohmann::json> keyed;
  for (const nlohmann::json& row : rows) {
    const std::string key = row.at(column).get<std::string>();
    EXPECT_FALSE(keyed.contains(key)) << column << " " << key << " twice";
    keyed[key] = row;
  }
  return keyed;
}

Figure drawn(const std::string& output) {
  Figure figure;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string kind, a, b;
    std::getline(fields, kind, '\t');
    std::getline(fields, a, '\t');
    std::getline(fields, b, '\t');
    if (kind == "series") figure.series.emplace_back(a, std::stoi(b));
    if (kind == "figure") {
      figure.width = std::stoi(a);
      figure.height = std::stoi(b);
    }
  }
  return figure;
}

std::optional<std::pair<int, int>> png_size(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char header[24] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof(header))) return std::nullopt;
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!std::equal(signature, signature + 8, header)) return std::nullopt;
  const auto be32 = [&](int at) {
    return (header[at] << 24) | (header[at + 1] << 16) | (header[at + 2] << 8) | header[at + 3];
  };
  return std::pair(be32(16), be32(20));  // IHDR: width, height
}

fs::path scratch_directory(const std::string& name) {
  std::string pattern = (fs::temp_directory_path() / ("commsgd_" + name + "_XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

}  // namespace commsgd::testing
