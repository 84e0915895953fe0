// Running commsgd-report as a user would, and reading what it printed and drew.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.hpp"

namespace commsgd::testing {

// commsgd-report args... (stdout and stderr together).
ProcessResult report(const std::vector<std::string>& args);

// Bad input: exit status 2 and exactly one line, the error, naming the problem (`fragment`).
void expect_one_line_error(const ProcessResult& r, const std::string& fragment);

// A file's bytes.
std::string contents(const std::filesystem::path& file);

// commsgd-report args... --format json, parsed; a failed run fails the test and returns null.
nlohmann::json report_json(std::vector<std::string> args);

// The rows of a read-only query on a database file, as the same JSON as report_json prints.
nlohmann::json query_json(const std::filesystem::path& db, const std::string& sql);

// The rows of a JSON report by the value of one of their columns (which must be unique).
std::map<std::string, nlohmann::json> by(const nlohmann::json& rows, const std::string& column);

// What plot.py said it drew: points per series label, in legend order, and the figure's pixels.
struct Figure {
  std::vector<std::pair<std::string, int>> series;
  int width = 0, height = 0;
};
Figure drawn(const std::string& output);

// Width and height from a PNG's header; nullopt when the file is not a PNG.
std::optional<std::pair<int, int>> png_size(const std::filesystem::path& file);

// A fresh directory for a test, removed by the caller.
std::filesystem::path scratch_directory(const std::string& name);

}  // namespace commsgd::testing
