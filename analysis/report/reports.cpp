#include "analysis/report/reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "algorithms/catalog.hpp"
#include "analysis/report/configurations.hpp"

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

namespace {

// `t` with a column `configuration` after its run_id: the configuration's short name, the same for
// every run that differs from another only in its seed.
Table with_configuration(const Connection& db, const RunSet& runs, Table t) {
  std::map<std::string, std::string> name_of;
  for (const RunConfiguration& c : run_configurations(db, runs.in, runs.params))
    name_of[c.run_id] = configuration_id(c.options);
  const std::size_t id = t.column("run_id");
  t.columns.insert(t.columns.begin() + static_cast<long>(id) + 1, "configuration");
  for (Row& row : t.rows) {
    row.insert(row.begin() + static_cast<long>(id) + 1, name_of.at(std::get<std::string>(row[id])));
  }
  return t;
}

}  // namespace

Table runs_report(const Connection& db, const std::vector<Filter>& filters) {
  const RunSet runs = selected_runs(db, filters);
  return with_configuration(db, runs,
                            db.query(fmt::format(R"sql(
    SELECT run_id, created_at, status, algo, selector, aggregation, model, dataset, workers,
           network, batch_size, density, epochs_done, final_val_top1, best_val_top1,
           samples_per_s, scaling_efficiency, bytes_sent_per_step,
           round(peak_rss_max_bytes / 1048576.0, 1) AS peak_rss_max_mib,
           round(peak_rss_mean_bytes / 1048576.0, 1) AS peak_rss_mean_mib, overlapped_by
    FROM run_summary
    WHERE run_id {}
    ORDER BY created_at, run_id)sql",
                                                 runs.in),
                                     runs.params));
}

namespace {

// Mean, sample standard deviation and count of the values that are there.
struct Spread {
  std::vector<double> values;
  void add(const Value& v) {
    if (std::holds_alternative<double>(v)) values.push_back(std::get<double>(v));
    if (std::holds_alternative<std::int64_t>(v))
      values.push_back(static_cast<double>(std::get<std::int64_t>(v)));
  }
  Value mean() const {
    if (values.empty()) return std::monostate{};
    double sum = 0;
    for (const double x : values) sum += x;
    return sum / static_cast<double>(values.size());
  }
  // Over seeds: n - 1 in the denominator; none for a single run.
  Value sd() const {
    if (values.size() < 2) return std::monostate{};
    const double m = std::get<double>(mean());
    double squares = 0;
    for (const double x : values) squares += (x - m) * (x - m);
    return std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
};

// The selected runs grouped by configuration (configurations.hpp), network and workers, in the
// order of the runs table; `measures` are columns of `per_run` averaged over each group's counted
// runs.
struct Group {
  const nlohmann::json* configuration = nullptr;
  Row key;  // per_run's key columns of the group's first run
  std::int64_t runs = 0, overlapping = 0;
  std::vector<Spread> measures;
};

std::vector<Group> group_by_configuration(const Table& per_run,
                                          const std::vector<RunConfiguration>& configurations,
                                          std::size_t key_columns,
                                          const std::vector<std::string>& measures) {
  std::map<std::string, const nlohmann::json*> of_run;
  for (const RunConfiguration& c : configurations) of_run[c.run_id] = &c.options;
  const std::size_t id = per_run.column("run_id"), counted = per_run.column("counted"),
                    overlapped = per_run.column("overlapped"), network = per_run.column("network"),
                    workers = per_run.column("workers");
  std::vector<std::size_t> measure_columns;
  for (const std::string& m : measures) measure_columns.push_back(per_run.column(m));
  std::vector<Group> groups;
  std::map<std::tuple<std::string, Value, Value>, std::size_t> index;
  for (const Row& row : per_run.rows) {
    const nlohmann::json* c = of_run.at(std::get<std::string>(row[id]));
    const auto [at, added] =
        index.try_emplace({c->dump(), row[network], row[workers]}, groups.size());
    if (added) {
      groups.push_back({c, Row(row.begin(), row.begin() + static_cast<long>(key_columns)), 0, 0,
                        std::vector<Spread>(measures.size())});
    }
    Group& g = groups[at->second];
    g.overlapping += std::get<std::int64_t>(row[overlapped]);
    if (std::get<std::int64_t>(row[counted]) == 0) continue;
    ++g.runs;
    for (std::size_t m = 0; m < measure_columns.size(); ++m) {
      g.measures[m].add(row[measure_columns[m]]);
    }
  }
  return groups;
}

std::vector<const nlohmann::json*> configurations_of(const std::vector<Group>& groups) {
  std::vector<const nlohmann::json*> out;
  for (const Group& g : groups) out.push_back(g.configuration);
  return out;
}

// The options a report's fixed columns show already.
const std::vector<std::string> kShownOptions = {"model",    "dataset",     "device", "algo",
                                                "selector", "aggregation", "density"};

// `params`, then the baseline algorithm's name: the parameter of a query that orders its runs
// first.
std::vector<Value> with_baseline(std::vector<Value> params) {
  params.emplace_back(std::string(algorithms::baseline_algorithm()));
  return params;
}

std::size_t differences(const nlohmann::json& a, const nlohmann::json& b) {
  std::size_t n = 0;
  for (const auto& [key, value] : a.items()) n += !b.contains(key) || b[key] != value;
  for (const auto& [key, value] : b.items()) n += !a.contains(key);
  return n;
}

// The dense group a row's speedup is measured against: the dense runs of the same model, data
// set, network, device, workers and batch size, and of those configurations the one nearest the
// row's (fewest options apart: a dense run with the row's bucket size and wire type over one
// without). None when two are equally near: the speedup would depend on which was taken.
const Group* dense_baseline(const Group& row, const std::vector<Group>& groups,
                            const Table& per_run) {
  const Group* best = nullptr;
  std::size_t nearest = 0;
  bool tie = false;
  for (const Group& d : groups) {
    if ((*d.configuration)["algo"] != algorithms::baseline_algorithm() || d.runs == 0) continue;
    bool same = true;
    for (const char* column : {"model", "dataset", "network", "device", "workers"}) {
      same = same && d.key[per_run.column(column)] == row.key[per_run.column(column)];
    }
    if (!same || (*d.configuration)["batch_size"] != (*row.configuration)["batch_size"]) continue;
    const std::size_t apart = differences(*d.configuration, *row.configuration);
    if (best == nullptr || apart < nearest) {
      best = &d;
      nearest = apart;
      tie = false;
    } else if (apart == nearest) {
      tie = true;
    }
  }
  return tie ? nullptr : best;
}

// Rows by what was run (the columns before algo), dense first among its peers, then by algo and
// the columns after it up to `key_end` (selector, aggregation, the options that tell rows apart).
void sort_dense_first(Table& t, std::size_t key_end) {
  const std::size_t algo = t.column("algo");
  const auto order = [&](const Row& r) {
    Row key(r.begin(), r.begin() + static_cast<long>(algo));
    const bool dense = std::holds_alternative<std::string>(r[algo]) &&
                       std::get<std::string>(r[algo]) == algorithms::baseline_algorithm();
    key.push_back(std::int64_t{dense ? 0 : 1});
    key.insert(key.end(), r.begin() + static_cast<long>(algo),
               r.begin() + static_cast<long>(key_end));
    return key;
  };
  std::stable_sort(t.rows.begin(), t.rows.end(),
                   [&](const Row& a, const Row& b) { return order(a) < order(b); });
}

}  // namespace

Table compare_report(const Connection& db, const std::vector<Filter>& filters,
                     std::optional<double> target, bool include_overlapping) {
  const RunSet runs = selected_runs(db, filters);
  std::vector<Value> params{std::int64_t{include_overlapping ? 1 : 0}};
  // The time a run first reached the target, if it did; without a target, no column.
  std::string reached = "NULL";
  if (target) {
    reached =
        "(SELECT min(t.wall_seconds) FROM time_to_accuracy t "
        "WHERE t.run_id = s.run_id AND t.val_top1 >= ?)";
    params.emplace_back(*target);
  }
  params.insert(params.end(), runs.params.begin(), runs.params.end());
  // Runs that shared a host with another run at the same time are left out of every mean (and
  // so of dense's, the speedup's baseline) unless asked for; overlapping_runs counts them, and a
  // row whose runs all overlapped stays, with runs = 0, so that none vanishes unseen.
  const Table per_run = db.query(fmt::format(R"sql(
    SELECT s.model, s.dataset, s.network, s.device, s.workers, s.algo, s.selector, s.aggregation,
           s.density, s.run_id, (? OR s.overlapped_by IS NULL) AS counted,
           (s.overlapped_by IS NOT NULL) AS overlapped, s.samples_per_s, s.final_val_top1,
           {} AS time_to_target_s, s.achieved_density, s.bytes_sent_per_step
    FROM run_summary s
    WHERE s.run_id {})sql",
                                             reached, runs.in),
                                 params);
  constexpr std::size_t kKey = 9;  // model .. density
  const std::vector<std::string> measures = {"samples_per_s", "final_val_top1", "time_to_target_s",
                                             "achieved_density", "bytes_sent_per_step"};
  const std::vector<RunConfiguration> configurations = run_configurations(db, runs.in, runs.params);
  std::vector<Group> groups = group_by_configuration(per_run, configurations, kKey, measures);
  const std::vector<std::string> differing =
      differing_options(configurations_of(groups), kShownOptions);

  Table t;
  t.columns.assign(per_run.columns.begin(), per_run.columns.begin() + kKey - 1);  // .. aggregation
  t.columns.insert(t.columns.end(), differing.begin(), differing.end());
  t.columns.insert(t.columns.end(), {"runs", "samples_per_s", "samples_per_s_sd",
                                     "speedup_vs_dense", "final_val_top1", "final_val_top1_sd"});
  if (target) t.columns.insert(t.columns.end(), {"time_to_target_s", "time_to_target_s_sd"});
  t.columns.insert(t.columns.end(),
                   {"density", "achieved_density", "bytes_sent_per_step", "overlapping_runs"});
  for (const Group& g : groups) {
    Row row(g.key.begin(), g.key.begin() + kKey - 1);
    for (const std::string& option : differing)
      row.push_back(option_cell(*g.configuration, option));
    const Value throughput = g.measures[0].mean();
    Value speedup;
    if (const Group* dense = dense_baseline(g, groups, per_run);
        dense != nullptr && std::holds_alternative<double>(throughput)) {
      const Value base = dense->measures[0].mean();
      if (std::holds_alternative<double>(base) && std::get<double>(base) > 0)
        speedup = std::get<double>(throughput) / std::get<double>(base);
    }
    row.insert(row.end(), {g.runs, throughput, g.measures[0].sd(), speedup, g.measures[1].mean(),
                           g.measures[1].sd()});
    if (target) row.insert(row.end(), {g.measures[2].mean(), g.measures[2].sd()});
    row.insert(row.end(),
               {g.key[kKey - 1], g.measures[3].mean(), g.measures[4].mean(), g.overlapping});
    t.rows.push_back(std::move(row));
  }
  sort_dense_first(t, t.column("algo") + 3 + differing.size());
  return t;
}

Table scaling_report(const Connection& db, const std::vector<Filter>& filters,
                     bool include_overlapping) {
  const RunSet runs = selected_runs(db, filters);
  std::vector<Value> params{std::int64_t{include_overlapping ? 1 : 0}};
  params.insert(params.end(), runs.params.begin(), runs.params.end());
  const Table per_run = db.query(fmt::format(R"sql(
    SELECT model, dataset, network, device, algo, selector, aggregation, workers, run_id,
           (? OR overlapped_by IS NULL) AS counted, (overlapped_by IS NOT NULL) AS overlapped,
           scaling_efficiency
    FROM run_summary
    WHERE run_id {})sql",
                                             runs.in),
                                 params);
  constexpr std::size_t kKey = 7;  // model .. aggregation name a row; workers, a column
  const std::vector<RunConfiguration> configurations = run_configurations(db, runs.in, runs.params);
  const std::vector<Group> cells =
      group_by_configuration(per_run, configurations, kKey + 1, {"scaling_efficiency"});
  const std::vector<std::string> differing =
      differing_options(configurations_of(cells), kShownOptions);
  std::set<std::int64_t> workers;
  for (const Group& cell : cells) workers.insert(std::get<std::int64_t>(cell.key[kKey]));

  Table t;
  t.columns.assign(per_run.columns.begin(), per_run.columns.begin() + kKey);
  t.columns.insert(t.columns.end(), differing.begin(), differing.end());
  const std::size_t first_p = t.columns.size();
  for (const std::int64_t p : workers) {
    t.columns.insert(t.columns.end(),
                     {fmt::format("P={}", p), fmt::format("P={}_sd", p), fmt::format("P={}_n", p)});
  }
  // A row: one configuration and network, whatever the workers.
  std::map<std::pair<std::string, Value>, std::size_t> row_of;
  for (const Group& cell : cells) {
    const Value network = cell.key[per_run.column("network")];
    const auto [at, added] =
        row_of.try_emplace({cell.configuration->dump(), network}, t.rows.size());
    if (added) {
      Row line(cell.key.begin(), cell.key.begin() + kKey);
      for (const std::string& option : differing)
        line.push_back(option_cell(*cell.configuration, option));
      line.resize(t.columns.size());
      for (std::size_t c = first_p + 2; c < line.size(); c += 3) line[c] = std::int64_t{0};
      t.rows.push_back(std::move(line));
    }
    const auto p = std::get<std::int64_t>(cell.key[kKey]);
    const std::size_t column =
        first_p + 3 * static_cast<std::size_t>(std::distance(workers.begin(), workers.find(p)));
    Row& line = t.rows[at->second];
    line[column] = cell.measures[0].mean();
    line[column + 1] = cell.measures[0].sd();
    line[column + 2] = static_cast<std::int64_t>(cell.measures[0].values.size());
  }
  sort_dense_first(t, first_p);
  return t;
}

Table breakdown_report(const Connection& db, const std::vector<Filter>& filters, bool shares) {
  const RunSet runs = selected_runs(db, filters);
  const std::string phases =
      shares ? "data_share, forward_backward_share, select_share, communicate_share, wait_share, "
               "update_share, other_share"
             : "data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, other_s, "
               "total_s, overlapped_communicate_s";
  return db.query(fmt::format(R"sql(
    SELECT s.run_id, s.algo, s.model, s.network, s.workers, {}, s.overlapped_by
    FROM run_summary s
    JOIN time_breakdown b ON b.run_id = s.run_id
    WHERE s.run_id {}
    ORDER BY s.model, s.network, s.workers, s.algo <> ?, s.algo, s.created_at)sql",
                              phases, runs.in),
                  with_baseline(runs.params));
}

Table convergence_report(const Connection& db, const std::vector<Filter>& filters) {
  const RunSet runs = selected_runs(db, filters);
  return with_configuration(db, runs,
                            db.query(fmt::format(R"sql(
    SELECT e.run_id, r.algo, r.workers, e.epoch, e.wall_seconds, e.train_loss, e.train_acc,
           e.val_loss, e.val_top1, e.val_top5, e.val_perplexity, e.consensus_distance,
           s.overlapped_by
    FROM epochs e
    JOIN runs r ON r.id = e.run_id
    JOIN run_summary s ON s.run_id = e.run_id
    WHERE e.run_id {}
    ORDER BY r.created_at, e.run_id, e.epoch)sql",
                                                 runs.in),
                                     runs.params));
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
