#include "analysis/report/reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace commsgd::report {
namespace {

std::int64_t count_rows(const Connection& db, const std::string& sql,
                        const std::vector<Value>& params) {
  return std::get<std::int64_t>(db.query(sql, params).rows.at(0).at(0));
}

}  // namespace

RunSet selected_runs(const Connection& db, const std::vector<Filter>& filters) {
  const Where where = where_clause(filters, "run_summary", db.columns_of("run_summary"));
  if (count_rows(db, "SELECT count(*) FROM run_summary " + where.sql, where.params) == 0) {
    if (filters.empty() || count_rows(db, "SELECT count(*) FROM runs", {}) == 0)
      throw InputError(fmt::format("{}: no runs recorded", db.name()));
    std::vector<std::string> given;
    for (const Filter& f : filters) given.push_back(f.text);
    throw InputError(fmt::format("{}: no runs match {}", db.name(), fmt::join(given, " and ")));
  }
  return {fmt::format("IN (SELECT run_id FROM run_summary {})", where.sql), where.params};
}

namespace {

// The selected runs' rows (g) of a per-step measurement table (grad_stats, norm_study) with
// their run (r): `columns` selected, `tail` (GROUP BY, ORDER BY) after the WHERE. Throws
// InputError, naming the trainer option that records them, when there are none.
Table measurement_query(const Connection& db, const std::vector<Filter>& filters,
                        std::string_view table, std::string_view option, std::string_view columns,
                        std::string_view tail) {
  const RunSet runs = selected_runs(db, filters);
  Table t = db.query(fmt::format("SELECT {} FROM {} g JOIN runs r ON r.id = g.run_id "
                                 "WHERE g.run_id {} {}",
                                 columns, table, runs.in, tail),
                     runs.params);
  if (t.rows.empty()) {
    throw InputError(
        fmt::format("{}: the selected runs have no {} (run the sparse algorithms with {} N)",
                    db.name(), table, option));
  }
  return t;
}

Table grad_stats_query(const Connection& db, const std::vector<Filter>& filters,
                       std::string_view columns, std::string_view tail) {
  return measurement_query(db, filters, "grad_stats", "--grad-stats-every", columns, tail);
}

Table norm_study_query(const Connection& db, const std::vector<Filter>& filters,
                       std::string_view columns, std::string_view tail) {
  return measurement_query(db, filters, "norm_study", "--norm-study-every", columns, tail);
}

}  // namespace

Table runs_report(const Connection& db, const std::vector<Filter>& filters) {
  const RunSet runs = selected_runs(db, filters);
  return db.query(fmt::format(R"sql(
    SELECT run_id, created_at, status, algo, selector, aggregation, model, dataset, workers,
           network, batch_size, density, epochs_done, final_val_top1, best_val_top1,
           samples_per_s, scaling_efficiency, bytes_sent_per_step,
           round(peak_rss_max_bytes / 1048576.0, 1) AS peak_rss_max_mib,
           round(peak_rss_mean_bytes / 1048576.0, 1) AS peak_rss_mean_mib, overlapped_by
    FROM run_summary
    WHERE run_id {}
    ORDER BY created_at, run_id)sql",
                              runs.in),
                  runs.params);
}

Table compare_report(const Connection& db, const std::vector<Filter>& filters,
                     std::optional<double> target, bool include_overlapping) {
  const RunSet runs = selected_runs(db, filters);
  std::vector<Value> params = runs.params;
  // Without a target there is nothing to time: no CTE, no column.
  std::string reached_cte, reached_join, reached_mean, reached_column;
  if (target) {
    reached_cte = R"sql(, reached AS (
      SELECT run_id, min(wall_seconds) AS seconds FROM time_to_accuracy
      WHERE val_top1 >= ? GROUP BY run_id))sql";
    reached_join = "LEFT JOIN reached ON reached.run_id = r.run_id";
    reached_mean = "avg(CASE WHEN r.counted THEN reached.seconds END) AS time_to_target_s,";
    reached_column = "time_to_target_s,";
    params.emplace_back(*target);
  }
  // Runs that shared a host with another run at the same time are left out of every average
  // (and so of dense's, the speedup's baseline) unless asked for; overlapping_runs counts them,
  // and a row whose runs all overlapped stays, with runs = 0, so that none vanishes unseen.
  return db.query(fmt::format(R"sql(
    WITH r AS (SELECT *, ({} OR overlapped_by IS NULL) AS counted
               FROM run_summary WHERE run_id {}){},
    g AS (
      SELECT r.model, r.dataset, r.network, r.device, r.workers, r.algo, r.selector, r.aggregation,
             sum(r.counted) AS runs,
             avg(CASE WHEN r.counted THEN r.samples_per_s END) AS samples_per_s,
             avg(CASE WHEN r.counted THEN r.final_val_top1 END) AS final_val_top1, {}
             avg(CASE WHEN r.counted THEN r.bytes_sent_per_step END) AS bytes_sent_per_step,
             sum(r.overlapped_by IS NOT NULL) AS overlapping_runs
      FROM r {}
      GROUP BY r.model, r.dataset, r.network, r.device, r.workers, r.algo, r.selector,
               r.aggregation)
    SELECT model, dataset, network, device, workers, algo, selector, aggregation, runs,
           samples_per_s,
           samples_per_s / (SELECT avg(d.samples_per_s) FROM r d
                            WHERE d.counted AND d.algo = 'dense' AND d.model = g.model
                              AND d.dataset = g.dataset AND d.network = g.network
                              AND d.device = g.device AND d.workers = g.workers)
             AS speedup_vs_dense,
           final_val_top1, {} bytes_sent_per_step, overlapping_runs
    FROM g
    ORDER BY model, dataset, network, device, workers, algo <> 'dense', algo, selector,
             aggregation)sql",
                              include_overlapping ? "1" : "0", runs.in, reached_cte, reached_mean,
                              reached_join, reached_column),
                  params);
}

Table scaling_report(const Connection& db, const std::vector<Filter>& filters,
                     bool include_overlapping) {
  const RunSet runs = selected_runs(db, filters);
  const Table cells = db.query(fmt::format(R"sql(
    SELECT model, dataset, network, device, algo, selector, aggregation, workers,
           avg(CASE WHEN {} OR overlapped_by IS NULL THEN scaling_efficiency END)
    FROM run_summary
    WHERE run_id {}
    GROUP BY model, dataset, network, device, algo, selector, aggregation, workers
    ORDER BY model, dataset, network, device, algo <> 'dense', algo, selector, aggregation)sql",
                                           include_overlapping ? "1" : "0", runs.in),
                               runs.params);
  constexpr std::size_t kKey = 7;  // model .. aggregation name a row; workers, a column
  std::set<std::int64_t> workers;
  for (const Row& row : cells.rows) workers.insert(std::get<std::int64_t>(row[kKey]));

  Table t;
  t.columns.assign(cells.columns.begin(), cells.columns.begin() + kKey);
  for (const std::int64_t p : workers) t.columns.push_back(fmt::format("P={}", p));
  for (const Row& row : cells.rows) {
    if (t.rows.empty() || !std::equal(row.begin(), row.begin() + kKey, t.rows.back().begin())) {
      Row line(row.begin(), row.begin() + kKey);
      line.resize(t.columns.size());
      t.rows.push_back(std::move(line));
    }
    const auto p = std::get<std::int64_t>(row[kKey]);
    const auto column =
        kKey + static_cast<std::size_t>(std::distance(workers.begin(), workers.find(p)));
    t.rows.back()[column] = row[kKey + 1];
  }
  return t;
}

Table breakdown_report(const Connection& db, const std::vector<Filter>& filters, bool shares) {
  const RunSet runs = selected_runs(db, filters);
  const std::string phases =
      shares ? "data_share, forward_backward_share, select_share, communicate_share, wait_share, "
               "update_share, other_share"
             : "data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, other_s, "
               "total_s";
  return db.query(fmt::format(R"sql(
    SELECT s.run_id, s.algo, s.model, s.network, s.workers, {}, s.overlapped_by
    FROM run_summary s
    JOIN time_breakdown b ON b.run_id = s.run_id
    WHERE s.run_id {}
    ORDER BY s.model, s.network, s.workers, s.algo <> 'dense', s.algo, s.created_at)sql",
                              phases, runs.in),
                  runs.params);
}

Table convergence_report(const Connection& db, const std::vector<Filter>& filters) {
  const RunSet runs = selected_runs(db, filters);
  return db.query(fmt::format(R"sql(
    SELECT e.run_id, r.algo, r.workers, e.epoch, e.wall_seconds, e.train_loss, e.train_acc,
           e.val_loss, e.val_top1, e.val_top5, e.val_perplexity, e.consensus_distance,
           s.overlapped_by
    FROM epochs e
    JOIN runs r ON r.id = e.run_id
    JOIN run_summary s ON s.run_id = e.run_id
    WHERE e.run_id {}
    ORDER BY r.created_at, e.run_id, e.epoch)sql",
                              runs.in),
                  runs.params);
}

Table grad_stats_report(const Connection& db, const std::vector<Filter>& filters) {
  return grad_stats_query(db, filters, R"sql(
    g.run_id, r.algo, r.selector, r.density, r.workers, count(*) AS measurements,
    min(g.contraction) AS contraction_min, avg(g.contraction) AS contraction_mean,
    max(g.contraction) AS contraction_max, min(g.bound_linear) AS bound_linear_min,
    sum(g.contraction < g.bound_linear) AS below_linear,
    sum(g.contraction < g.bound_squared) AS below_squared)sql",
                          "GROUP BY g.run_id ORDER BY r.created_at, g.run_id");
}

Table grad_stats_steps_report(const Connection& db, const std::vector<Filter>& filters) {
  return grad_stats_query(db, filters, R"sql(
    g.run_id, r.algo, r.workers, g.step, g.contraction, g.bound_linear, g.bound_squared,
    g.histogram)sql",
                          "ORDER BY r.created_at, g.run_id, g.step");
}

Table norm_study_report(const Connection& db, const std::vector<Filter>& filters) {
  return norm_study_query(db, filters, R"sql(
    g.run_id, r.algo, r.selector, r.density, r.workers, count(*) AS measurements,
    avg(g.dense_norm) AS dense_norm_mean, avg(g.selected_distance) AS selected_mean,
    avg(g.randk_distance) AS randk_mean, avg(g.bound) AS bound_mean,
    avg(g.selected_distance / nullif(g.randk_distance, 0)) AS selected_over_randk,
    sum(g.selected_distance < g.randk_distance) AS below_randk,
    sum(g.selected_distance < g.bound) AS below_bound)sql",
                          "GROUP BY g.run_id ORDER BY r.created_at, g.run_id");
}

Table norm_study_steps_report(const Connection& db, const std::vector<Filter>& filters) {
  return norm_study_query(db, filters, R"sql(
    g.run_id, r.algo, r.workers, g.step, g.selected_distance, g.randk_distance, g.bound,
    g.dense_norm)sql",
                          "ORDER BY r.created_at, g.run_id, g.step");
}

Table export_report(const Connection& db, std::string_view relation,
                    const std::vector<Filter>& filters) {
  std::vector<std::string> known;
  for (const Row& row : db.query(R"sql(
        SELECT name FROM sqlite_master
        WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
        UNION SELECT name FROM sqlite_temp_master WHERE type = 'view'
        ORDER BY name)sql")
                            .rows)
    known.push_back(std::get<std::string>(row.at(0)));
  if (std::find(known.begin(), known.end(), relation) == known.end()) {
    throw InputError(fmt::format("{}: no table or view '{}'; there are: {}", db.name(), relation,
                                 fmt::join(known, ", ")));
  }
  const Where where = where_clause(filters, relation, db.columns_of(relation));
  return db.query(fmt::format("SELECT * FROM \"{}\" {}", relation, where.sql), where.params);
}

Table sql_report(const Connection& db, std::string_view sql, const std::vector<Value>& params) {
  Statement st(db, sql);
  if (!st.read_only())
    throw InputError(
        fmt::format("{}: sql runs read-only queries only (SELECT, WITH, EXPLAIN)", db.name()));
  st.bind(params);
  Table t{st.columns(), {}};
  while (st.step()) t.rows.push_back(st.row());
  return t;
}

}  // namespace commsgd::report
