#include "analysis/report/plot.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <set>

#include "analysis/report/sqlite.hpp"
#include "analysis/report/subprocess.hpp"
#include "common/installed_paths.hpp"

namespace commsgd::report {

void check_figure_path(const std::filesystem::path& output) {
  static const std::set<std::string> kSuffixes = {".png", ".svg", ".pdf"};
  if (!kSuffixes.contains(output.extension().string())) {
    throw InputError(
        fmt::format("-o {}: the file name must end in .png, .svg or .pdf", output.string()));
  }
}

void draw(const nlohmann::json& data, const std::filesystem::path& output) {
  // The script installed beside this program, or the source tree's; the Python that has
  // matplotlib, as configured (Debian's, not whatever python3 comes first in PATH).
  const std::string python = COMMSGD_PYTHON;
  const std::string script = shipped_file("plot.py", COMMSGD_PLOT_SCRIPT).string();
  if (access(python.c_str(), X_OK) != 0) {
    throw std::runtime_error(fmt::format(
        "{} not found; plots need Python 3 with matplotlib (Debian: python3-matplotlib)", python));
  }
  if (!std::filesystem::exists(script))
    throw std::runtime_error(fmt::format("plot script {} not found", script));
  const int status = run_with_input({python, script, "--output", output.string()}, data.dump());
  if (status != 0)
    throw std::runtime_error(fmt::format("{} failed with exit status {}", script, status));
}

}  // namespace commsgd::report
