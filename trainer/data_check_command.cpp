#include "trainer/data_check_command.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "trainer/data/data_check.hpp"
#include "trainer/exit_codes.hpp"

namespace commsgd::trainer {
namespace {

// Progress on stderr: rewritten in place on a terminal; in a job log, a line each tenth.
class CheckProgressLine {
 public:
  explicit CheckProgressLine(std::size_t threads) : threads_(threads) {}

  void operator()(std::size_t done, std::size_t total, std::size_t bad) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    const std::size_t tenth = total > 0 ? done * 10 / total : 10;
    if (!live_ && tenth == last_tenth_) return;
    last_tenth_ = tenth;
    fmt::print(stderr,
               "{}check-data: {}/{} images ({:.0f}%), {} bad, {:.0f} images/s on {} threads, "
               "ETA {:.0f} s{}",
               live_ ? "\r" : "", done, total, total > 0 ? 100.0 * done / total : 100.0, bad, rate,
               threads_, eta, live_ && done < total ? "" : "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::size_t threads_;
  bool live_ = isatty(fileno(stderr)) != 0;
  std::size_t last_tenth_ = 0;
  Clock::time_point start_ = Clock::now();
};

std::size_t check_threads(const Options& o) {
  if (o.loader_threads > 0) return static_cast<std::size_t>(o.loader_threads);
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

int run_data_check(const Options& o) {
  const data::DatasetOptions options = dataset_options(o);
  const std::size_t threads = check_threads(o);
  fmt::print("check-data: reading --dataset {}{}\n", o.dataset,
             o.data_path.empty() ? "" : " --data-path " + o.data_path);
  std::fflush(stdout);
  const data::DataCheckReport report =
      data::check_data(options, threads, CheckProgressLine(threads));
  for (const data::BadFile& file : report.bad) fmt::print("bad: {}\n", file.reason);
  for (const data::ClassCheck& c : report.classes) {
    if (c.bad > 0) fmt::print("bad in class {}/{}: {} of {}\n", c.split, c.name, c.bad, c.files);
  }
  if (!report.bad.empty()) {
    fmt::print("check-data: {} bad{}\n", report.bad.size(),
               report.images > 0 ? fmt::format(" of {} images", report.images) : "");
    return kExitBadInput;
  }
  fmt::print("check-data: good: {} training and {} validation {}{}\n", report.train_samples,
             report.validation_samples,
             data::dataset_table().find(o.dataset).text ? "tokens" : "samples",
             report.images > 0 ? fmt::format(", {} images decoded", report.images) : "");
  return kExitCompleted;
}

}  // namespace commsgd::trainer
