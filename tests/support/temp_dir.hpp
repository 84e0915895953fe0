// A fresh directory per test, removed afterwards even if the test fails.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace commsgd::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "commsgd_test") {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace commsgd::testing
