#include "algorithms/epoch_schedule.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace commsgd::algorithms {
namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::vector<EpochValue> parse_epoch_values(std::string_view text) {
  std::vector<EpochValue> entries;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    const std::size_t colon = entry.find(':');
    EpochValue e;
    if (colon == std::string_view::npos || !parse_number(entry.substr(0, colon), e.epoch) ||
        !parse_number(entry.substr(colon + 1), e.value)) {
      throw std::invalid_argument("'" + std::string(entry) + "' is not epoch:value");
    }
    if (e.epoch < 0 || !(e.value > 0) || !std::isfinite(e.value)) {
      throw std::invalid_argument("'" + std::string(entry) +
                                  "' needs an epoch >= 0 and a finite value > 0");
    }
    if (!entries.empty() && e.epoch <= entries.back().epoch) {
      throw std::invalid_argument("epochs must increase ('" + std::string(entry) + "')");
    }
    entries.push_back(e);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
    if (text.empty())
      throw std::invalid_argument("trailing ',' after '" + std::string(entry) + "'");
  }
  return entries;
}

}  // namespace commsgd::algorithms
