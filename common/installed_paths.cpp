#include "common/installed_paths.hpp"

#include <system_error>

namespace commsgd {
namespace {

namespace fs = std::filesystem;

// The directory of the running program; empty where /proc does not say.
fs::path program_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

}  // namespace

fs::path shipped_file(std::string_view relative, const fs::path& in_source) {
  const fs::path dir = program_dir();
  if (dir.empty()) return in_source;
  const fs::path installed = dir.parent_path() / "share" / "commsgd" / relative;
  std::error_code ec;
  return fs::exists(installed, ec) ? installed : in_source;
}

fs::path sibling_program(std::string_view name, const fs::path& in_build) {
  const fs::path dir = program_dir();
  if (dir.empty()) return in_build;
  const fs::path sibling = dir / name;
  std::error_code ec;
  return fs::exists(sibling, ec) ? sibling : in_build;
}

}  // namespace commsgd
