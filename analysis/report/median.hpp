// The median the reports take of repeated measurements: calibrations of one link, a run's windows.
#pragma once

#include <algorithm>
#include <vector>

namespace commsgd::report {

// The middle value, or the mean of the middle two of an even count; `v` is not empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t half = v.size() / 2;
  return v.size() % 2 == 1 ? v[half] : (v[half - 1] + v[half]) / 2;
}

}  // namespace commsgd::report
