#pragma once

#include <chrono>
#include <optional>

namespace commsgd::trainer {

struct EpochReport {
  int epoch = 0;  // from 0
  double train_loss = 0, train_acc = 0;
  double val_loss = 0, val_top1 = 0;
  std::optional<double> val_top5;
  std::optional<double> val_perplexity;  // language models
  double samples_per_second = 0;
};

// What rank 0 tells the person watching: one line per epoch on stdout (kept in job logs), and a
// live line on stderr, only when it is a terminal, with the running loss, throughput and ETA.
class Progress {
 public:
  Progress(bool enabled, int epochs, long total_iterations);

  void on_iteration(int epoch, long iteration, double loss, double samples_per_second);
  void on_epoch(const EpochReport& report, long iterations_done);

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;
  double eta(long iterations_done) const;

  bool enabled_;
  bool live_;
  int epochs_;
  long total_iterations_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_live_ = Clock::time_point::min();
};

}  // namespace commsgd::trainer
