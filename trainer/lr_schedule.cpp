#include "trainer/lr_schedule.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace commsgd::trainer {
namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

LrSchedule::LrSchedule(double base_lr, std::vector<Milestone> milestones, double warmup_epochs)
    : base_lr_(base_lr), milestones_(std::move(milestones)), warmup_epochs_(warmup_epochs) {}

double LrSchedule::lr(int epoch, long iteration, long iterations_per_epoch) const {
  double lr = base_lr_;
  for (const Milestone& m : milestones_) {
    if (epoch >= m.epoch) lr *= m.factor;
  }
  const double warmup_iterations = warmup_epochs_ * static_cast<double>(iterations_per_epoch);
  if (warmup_iterations > 0 && static_cast<double>(iteration) < warmup_iterations) {
    lr *= static_cast<double>(iteration + 1) / std::ceil(warmup_iterations);
  }
  return lr;
}

std::vector<LrSchedule::Milestone> parse_milestones(std::string_view text) {
  std::vector<LrSchedule::Milestone> milestones;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    const std::size_t colon = entry.find(':');
    LrSchedule::Milestone m;
    if (colon == std::string_view::npos || !parse_number(entry.substr(0, colon), m.epoch) ||
        !parse_number(entry.substr(colon + 1), m.factor)) {
      throw std::invalid_argument("'" + std::string(entry) + "' is not epoch:factor");
    }
    if (m.epoch < 0 || !(m.factor > 0) || !std::isfinite(m.factor)) {
      throw std::invalid_argument("'" + std::string(entry) +
                                  "' needs an epoch >= 0 and a finite factor > 0");
    }
    if (!milestones.empty() && m.epoch <= milestones.back().epoch) {
      throw std::invalid_argument("epochs must increase ('" + std::string(entry) + "')");
    }
    milestones.push_back(m);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
    if (text.empty())
      throw std::invalid_argument("trailing ',' after '" + std::string(entry) + "'");
  }
  return milestones;
}

}  // namespace commsgd::trainer
