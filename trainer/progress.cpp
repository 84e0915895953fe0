#include "trainer/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace commsgd::trainer {
namespace {

std::string clock_time(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(bool enabled, int epochs, long total_iterations)
    : enabled_(enabled),
      live_(enabled && isatty(fileno(stderr))),
      epochs_(epochs),
      total_iterations_(total_iterations) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

double Progress::eta(long iterations_done) const {
  if (iterations_done <= 0) return 0;
  return elapsed() / static_cast<double>(iterations_done) *
         static_cast<double>(total_iterations_ - iterations_done);
}

void Progress::on_iteration(int epoch, long iteration, double loss, double samples_per_second) {
  if (!live_) return;
  const auto now = Clock::now();
  if (now - last_live_ < std::chrono::milliseconds(250)) return;
  last_live_ = now;
  fmt::print(stderr, "\r\033[K  epoch {}/{}  iter {}/{}  loss {:.4f}  {:.0f} samples/s  ETA {}",
             epoch + 1, epochs_, iteration + 1, total_iterations_, loss, samples_per_second,
             clock_time(eta(iteration + 1)));
  std::fflush(stderr);
}

void Progress::on_epoch(const EpochReport& r, long iterations_done) {
  if (!enabled_) return;
  if (live_) fmt::print(stderr, "\r\033[K");
  const std::string top5 = r.val_top5 ? fmt::format(" top5 {:.2f}%", 100 * *r.val_top5) : "";
  const std::string perplexity =
      r.val_perplexity ? fmt::format(" perplexity {:.2f}", *r.val_perplexity) : "";
  fmt::print(
      "epoch {}/{}  train loss {:.4f} acc {:.2f}%  val loss {:.4f}{} top1 {:.2f}%{}  "
      "{:.0f} samples/s  elapsed {}  ETA {}\n",
      r.epoch + 1, epochs_, r.train_loss, 100 * r.train_acc, r.val_loss, perplexity,
      100 * r.val_top1, top5, r.samples_per_second, clock_time(elapsed()),
      clock_time(eta(iterations_done)));
  std::fflush(stdout);
}

}  // namespace commsgd::trainer
