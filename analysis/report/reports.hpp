// The ready-made reports: each is SQL over the views of analysis/views.sql, restricted to the runs
// that pass the filters (columns of the run_summary view). A report that would cover no run
// throws InputError instead of printing an empty table.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/filters.hpp"
#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

// The runs that pass the filters, as SQL to put after a run_id column.
struct RunSet {
  std::string in;  // "IN (SELECT run_id FROM run_summary WHERE ...)"
  std::vector<Value> params;
};
// Throws InputError when no run passes.
RunSet selected_runs(const Connection& db, const std::vector<Filter>& filters);

// One row per run: what ran (and its configuration's short name, configurations.hpp), how it
// ended, its accuracy, throughput and scaling efficiency, its ranks' peak memory, and the runs it
// shared a host with at the same time (overlapped_by).
Table runs_report(const Connection& db, const std::vector<Filter>& filters);

// One row per configuration (configurations.hpp), network and worker count: the runs of a row
// differ only in their seed. The options in which the rows shown differ are columns of their own
// (density, batch size, topology, wire type, ...), so no two configurations are blended. Each
// measure over the row's runs (n = runs): mean throughput and its standard deviation, speedup over
// the nearest dense configuration of the same model, data set, network, device, workers and batch
// size, final accuracy and its standard deviation, time to reach `target` top-1 (over the runs
// that reached it; the columns only with a target), the asked density beside the achieved one
// (entries sent / offered), bytes sent per step. Runs that shared a host with another run at the
// same time are left out unless `include_overlapping`; overlapping_runs counts them per row.
Table compare_report(const Connection& db, const std::vector<Filter>& filters,
                     std::optional<double> target, bool include_overlapping);

// Configurations × worker counts: for each worker count the mean scaling efficiency over the
// configuration's runs ("P=<workers>"), its standard deviation ("P=<workers>_sd") and how many
// runs ("P=<workers>_n"); the options in which the rows differ are columns of their own.
// Runs that shared a host with another run at the same time are left out of the cells unless
// `include_overlapping` (the 1-worker baselines always leave them out: views.sql).
Table scaling_report(const Connection& db, const std::vector<Filter>& filters,
                     bool include_overlapping);

// One row per run: mean seconds per iteration in each phase, or with `shares` each phase's share
// of the total, and overlapped_by (the runs it shared a host with at the same time).
Table breakdown_report(const Connection& db, const std::vector<Filter>& filters, bool shares);

// One row per run and epoch: training and validation metrics against epoch and wall time, with the
// run's configuration's short name.
Table convergence_report(const Connection& db, const std::vector<Filter>& filters);

// One row per run with grad_stats (--grad-stats-every): how many measurements, the least, mean
// and largest contraction ‖acc − acc_S‖²/‖acc‖² against the bound 1 − k/d, and how many of them
// fell below 1 − k/d and below (1 − k/d)².
Table grad_stats_report(const Connection& db, const std::vector<Filter>& filters);
// Every measurement of those runs: run_id, algo, workers, step, contraction, bound_linear,
// bound_squared, histogram (JSON), by run and step.
Table grad_stats_steps_report(const Connection& db, const std::vector<Filter>& filters);

// One row per run with norm_study (--norm-study-every): how many measurements, the means of ‖x‖,
// ‖x − u‖, ‖x − randk(x)‖ and the bound, the mean ratio of the selection's distance to random-k's,
// and how many measurements fell below random-k's and below the bound.
Table norm_study_report(const Connection& db, const std::vector<Filter>& filters);
// Every norm_study row of the selected runs, with the run's algo and workers, by run and step.
Table norm_study_steps_report(const Connection& db, const std::vector<Filter>& filters);

// Every row of a table or view (rows passing `filters` on its own columns).
Table export_report(const Connection& db, std::string_view relation,
                    const std::vector<Filter>& filters);

// A read-only query given by the user, its ?s bound to `params`.
Table sql_report(const Connection& db, std::string_view sql, const std::vector<Value>& params);

}  // namespace commsgd::report
