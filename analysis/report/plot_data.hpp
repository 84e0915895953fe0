// The data of each figure, as the JSON document analysis/plot.py draws from: the report tool does
// the SQL (and its filters), the script only draws. Every document has "kind" and "series", each
// series a "label" (its legend entry) and its points.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/report/filters.hpp"
#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

// The `epochs` columns a convergence figure can show.
const std::vector<std::string>& convergence_metrics();

// `metric` (one of convergence_metrics()) against epoch and against wall time, one line per run.
nlohmann::json convergence_data(const Connection& db, const std::vector<Filter>& filters,
                                const std::string& metric);
// Scaling efficiency against workers, one bar series per algorithm.
nlohmann::json scaling_data(const Connection& db, const std::vector<Filter>& filters);
// Seconds per iteration by phase, one stacked bar per run, one series per phase.
nlohmann::json breakdown_data(const Connection& db, const std::vector<Filter>& filters);
// Per run, the contraction and the bounds 1 − k/d and (1 − k/d)² against step; and the histogram
// of the first run's accumulated gradient at its last measurement (the "Understanding Top-k"
// figure).
nlohmann::json grad_stats_data(const Connection& db, const std::vector<Filter>& filters);
// Per run: ‖x − u‖, ‖x − randk(x)‖, the bound (1 − k/d)‖x‖ and ‖x‖ against the step (the gTop-k
// paper's norm study).
nlohmann::json norm_study_data(const Connection& db, const std::vector<Filter>& filters);
// Selection time of the exact and gaussian selectors against d (the `kernels` benchmark, its most
// recent measurement of each point), one line per selector and density; filters on `bench`.
nlohmann::json selection_data(const Connection& db, const std::vector<Filter>& filters);

}  // namespace commsgd::report
