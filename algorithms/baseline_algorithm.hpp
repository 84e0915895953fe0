#pragma once

#include <string_view>

namespace commsgd::algorithms {

// The algorithm comparisons measure against: S-SGD, whose one-worker runs are plain SGD. The
// catalog's row takes its name from here, and so do the run record's views (the scaling
// baseline of analysis/views.sql), which are built without the catalog. Nothing else names it.
inline constexpr std::string_view kBaselineAlgorithm = "dense";

}  // namespace commsgd::algorithms
