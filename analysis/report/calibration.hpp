// What commsgd-bench measured on these hosts, as the cost model (cost_model.hpp) takes it: each
// network's link (commsgd-bench pingpong, one run per network) and gTop-k's merge (commsgd-bench
// merge). One benchmark run is one calibration. Where a database holds several of a kind, the
// model takes their median: each value the median of the calibrations' values, each measured
// size's time the median of the times measured at it, so that one calibration taken while the
// hosts were in a slow mode, its first message after computation far slower than the others',
// moves nothing (results/costmodel/README.md; one machine's readings are in
// results/notes-from-code.md).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "analysis/report/cost_model.hpp"
#include "analysis/report/sqlite.hpp"
#include "analysis/report/table.hpp"

namespace commsgd::report {

// Each network's link from its pingpong calibrations: the exchange's fit and time by size (both
// directions at once, as in every collective), the one-way fit and time by size, and, from
// calibrations with an after-idle sweep, the after-idle fit, the token bucket's burst and the
// first message's latency by the computation before it. A network with only a one-way fit uses it
// both ways.
std::map<std::string, Link> calibrated_links(const Connection& db);

// gTop-k's merge of two sets, seconds by k (MessageTime's sizes are entries here), from the
// merge calibrations; none where the database has none.
std::optional<MessageTime> calibrated_merge(const Connection& db);

// The medians the model takes, one row per value and per measured size: suite (pingpong or
// merge), network ("" for the merge), calibrations (how many runs the median is over), name,
// size (bytes, k, or seconds computed before the message; NULL for a fitted value) and value.
Table calibration_report(const Connection& db);

}  // namespace commsgd::report
