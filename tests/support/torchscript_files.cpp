#include "tests/support/torchscript_files.hpp"

#include <stdexcept>

#include "tests/support/process.hpp"

namespace commsgd::testing {
namespace {

void run_python(std::vector<std::string> argv) {
  argv.insert(argv.begin(), COMMSGD_PYTHON);
  const ProcessResult r = run_process(argv, std::chrono::seconds(300));
  if (r.exit_code != 0) {
    std::string shown;
    for (const std::string& a : argv) shown += a + " ";
    throw std::runtime_error(shown + "failed:\n" + r.output);
  }
}

}  // namespace

void export_torchscript(const std::string& model, const std::filesystem::path& file,
                        const std::vector<std::string>& args) {
  std::vector<std::string> argv = {COMMSGD_SOURCE_DIR "/tools/export_torchscript.py", model,
                                   file.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  run_python(argv);
}

void write_torchscript_fixtures(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  run_python({COMMSGD_SOURCE_DIR "/tests/support/torchscript_fixtures.py", dir.string()});
}

}  // namespace commsgd::testing
