#include "analysis/report/plot_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <variant>

#include "analysis/report/format.hpp"
#include "analysis/report/reports.hpp"

namespace commsgd::report {
namespace {

using nlohmann::json;

json to_json(const Value& v) {
  if (is_null(v)) return nullptr;
  return as_double(v);
}

// "algo P=workers" per row of a report with run_id, algo and workers columns, made unique with
// the start of the run id where several runs would share a label.
std::vector<std::string> run_labels(const Table& t) {
  const std::size_t id = t.column("run_id"), algo = t.column("algo"), workers = t.column("workers");
  std::map<std::string, std::set<std::string>> runs_of;
  std::vector<std::string> labels;
  for (const Row& row : t.rows) {
    labels.push_back(fmt::format("{} P={}", std::get<std::string>(row[algo]),
                                 std::get<std::int64_t>(row[workers])));
    runs_of[labels.back()].insert(std::get<std::string>(row[id]));
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (runs_of[labels[i]].size() > 1)
      labels[i] += fmt::format(" ({})", std::get<std::string>(t.rows[i][id]).substr(0, 8));
  }
  // A run whose times another run's load is in says so on the figure.
  if (const auto overlapped = std::ranges::find(t.columns, "overlapped_by");
      overlapped != t.columns.end()) {
    const auto c = static_cast<std::size_t>(overlapped - t.columns.begin());
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (!std::holds_alternative<std::monostate>(t.rows[i][c])) labels[i] += " [overlapped]";
    }
  }
  return labels;
}

// At least one point, or the figure would be an empty frame: say why instead.
void require_points(const json& series, const std::string& why) {
  for (const json& s : series) {
    if (s["points"].get<int>() > 0) return;
  }
  throw InputError(why);
}

}  // namespace

const std::vector<std::string>& convergence_metrics() {
  static const std::vector<std::string> metrics = {"val_top1",   "val_loss",  "val_top5",
                                                   "train_loss", "train_acc", "val_perplexity"};
  return metrics;
}

json convergence_data(const Connection& db, const std::vector<Filter>& filters,
                      const std::string& metric) {
  const Table t = convergence_report(db, filters);
  const std::vector<std::string> labels = run_labels(t);
  const std::size_t id = t.column("run_id"), epoch = t.column("epoch"),
                    wall = t.column("wall_seconds"), value = t.column(metric);
  json series = json::array();
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const Row& row = t.rows[i];
    if (i == 0 || row[id] != t.rows[i - 1][id]) {  // rows come grouped by run
      series.push_back({{"label", labels[i]},
                        {"epoch", json::array()},
                        {"wall_seconds", json::array()},
                        {"value", json::array()},
                        {"points", 0}});
    }
    if (is_null(row[value])) continue;  // e.g. val_top5 with fewer than 5 classes
    json& s = series.back();
    s["epoch"].push_back(as_double(row[epoch]));
    s["wall_seconds"].push_back(as_double(row[wall]));
    s["value"].push_back(as_double(row[value]));
    s["points"] = s["points"].get<int>() + 1;
  }
  require_points(series,
                 fmt::format("{}: the selected runs have no epochs with {}", db.name(), metric));
  return {{"kind", "convergence"}, {"metric", metric}, {"series", series}};
}

json scaling_data(const Connection& db, const std::vector<Filter>& filters) {
  const Table t = scaling_report(db, filters, false);
  // The means, "P=4"; not their spread ("P=4_sd") and count ("P=4_n").
  std::vector<std::size_t> means;
  json workers = json::array();
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c].starts_with("P=") && t.columns[c].find('_') == std::string::npos) {
      means.push_back(c);
      workers.push_back(std::stoi(t.columns[c].substr(2)));
    }
  }
  // A label names the algorithm; its selector and aggregation too where the same algo appears
  // with several pairs; the model, dataset, network or device where the rows differ in them; and
  // the options that tell configurations apart (the columns between aggregation and the cells).
  const std::size_t algo = t.column("algo");
  const std::size_t options = t.column("aggregation") + 1;
  std::map<Value, std::set<std::pair<Value, Value>>> pairs_of;
  std::vector<bool> varies(algo, false);
  // An option is named where it tells apart rows of one algorithm, not where it only follows
  // the algorithm (the sparse runs' --grad-stats-every beside dense's 0).
  std::vector<bool> splits(means.front(), false);
  for (const Row& row : t.rows) {
    pairs_of[row[algo]].insert({row[algo + 1], row[algo + 2]});
    for (std::size_t c = 0; c < algo; ++c) varies[c] = varies[c] || row[c] != t.rows[0][c];
    for (const Row& other : t.rows) {
      for (std::size_t c = options; c < means.front(); ++c) {
        splits[c] = splits[c] || (other[algo] == row[algo] && other[c] != row[c]);
      }
    }
  }
  json series = json::array();
  for (const Row& row : t.rows) {
    std::vector<std::string> parts;
    for (std::size_t c = 0; c < algo; ++c) {
      if (varies[c]) parts.push_back(std::get<std::string>(row[c]));
    }
    parts.push_back(std::get<std::string>(row[algo]));
    if (pairs_of[row[algo]].size() > 1) {
      parts.push_back(fmt::format("({}+{})", std::get<std::string>(row[algo + 1]),
                                  std::get<std::string>(row[algo + 2])));
    }
    for (std::size_t c = options; c < means.front(); ++c) {
      if (splits[c]) parts.push_back(fmt::format("{}={}", t.columns[c], value_text(row[c])));
    }
    json values = json::array();
    int points = 0;
    for (const std::size_t c : means) {
      values.push_back(to_json(row[c]));
      points += is_null(row[c]) ? 0 : 1;
    }
    series.push_back({{"label", fmt::format("{}", fmt::join(parts, " "))},
                      {"values", values},
                      {"points", points}});
  }
  require_points(series, fmt::format("{}: no scaling efficiency to plot: the selected runs have "
                                     "no 1-worker run of the same model, dataset, network and "
                                     "device",
                                     db.name()));
  return {{"kind", "scaling"}, {"workers", workers}, {"series", series}};
}

json breakdown_data(const Connection& db, const std::vector<Filter>& filters) {
  const Table t = breakdown_report(db, filters, false);
  json series = json::array();
  for (const char* phase :
       {"data", "forward_backward", "select", "communicate", "wait", "update", "other"}) {
    const std::size_t c = t.column(std::string(phase) + "_s");
    json values = json::array();
    for (const Row& row : t.rows) values.push_back(to_json(row[c]));
    series.push_back({{"label", phase}, {"values", values}, {"points", t.rows.size()}});
  }
  // Not a phase: drawn apart from the stack, which is the step.
  json overlapped = json::array();
  const std::size_t o = t.column("overlapped_communicate_s");
  for (const Row& row : t.rows) overlapped.push_back(to_json(row[o]));
  return {{"kind", "breakdown"},
          {"bars", run_labels(t)},
          {"series", series},
          {"overlapped", overlapped}};
}

json grad_stats_data(const Connection& db, const std::vector<Filter>& filters) {
  const Table t = grad_stats_steps_report(db, filters);
  const std::vector<std::string> labels = run_labels(t);
  json series = json::array();
  json histogram;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const Row& row = t.rows[i];
    if (i == 0 || row[0] != t.rows[i - 1][0]) {  // rows come grouped by run
      series.push_back({{"label", labels[i]},
                        {"step", json::array()},
                        {"contraction", json::array()},
                        {"bound_linear", json::array()},
                        {"bound_squared", json::array()},
                        {"points", 0}});
    }
    json& s = series.back();
    s["step"].push_back(as_double(row[3]));
    s["contraction"].push_back(as_double(row[4]));
    s["bound_linear"].push_back(as_double(row[5]));
    s["bound_squared"].push_back(as_double(row[6]));
    s["points"] = s["points"].get<int>() + 1;
    if (series.size() == 1 && !is_null(row[7])) {
      histogram = json::parse(std::get<std::string>(row[7]));
      histogram["label"] = fmt::format("{}, step {}", labels[i], std::get<std::int64_t>(row[3]));
    }
  }
  return {{"kind", "grad_stats"}, {"series", series}, {"histogram", histogram}};
}

json norm_study_data(const Connection& db, const std::vector<Filter>& filters) {
  const Table t = norm_study_steps_report(db, filters);
  const std::vector<std::string> labels = run_labels(t);
  const std::vector<std::string> measures = {"selected_distance", "randk_distance", "bound",
                                             "dense_norm"};
  const std::size_t step = t.column("step");
  std::vector<std::size_t> columns;
  for (const std::string& m : measures) columns.push_back(t.column(m));
  json series = json::array();
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const Row& row = t.rows[i];
    if (i == 0 || row[0] != t.rows[i - 1][0]) {  // rows come grouped by run
      series.push_back({{"label", labels[i]}, {"step", json::array()}, {"points", 0}});
      for (const std::string& m : measures) series.back()[m] = json::array();
    }
    json& s = series.back();
    s["step"].push_back(as_double(row[step]));
    for (std::size_t m = 0; m < measures.size(); ++m) {
      s[measures[m]].push_back(as_double(row[columns[m]]));
    }
    s["points"] = s["points"].get<int>() + 1;
  }
  return {{"kind", "norm_study"}, {"series", series}};
}

json selection_data(const Connection& db, const std::vector<Filter>& filters) {
  const Where where = where_clause(filters, "bench", db.columns_of("bench"));
  const Table t = db.query(fmt::format(R"sql(
    SELECT name, params, value FROM (SELECT * FROM bench {})
    WHERE suite = 'kernels' AND name IN ('exact', 'gaussian') AND unit = 's'
    ORDER BY created_at, id)sql",
                                       where.sql),
                           where.params);
  // (selector, density) -> d -> seconds; later rows overwrite earlier ones: the most recent wins.
  std::map<std::pair<std::string, double>, std::map<double, double>> points;
  for (const Row& row : t.rows) {
    const json params = json::parse(is_null(row[1]) ? "{}" : std::get<std::string>(row[1]), nullptr,
                                    /*allow_exceptions=*/false);
    if (!params.is_object() || !params["d"].is_number() || !params["density"].is_number()) continue;
    points[{std::get<std::string>(row[0]), params["density"].get<double>()}]
          [params["d"].get<double>()] = as_double(row[2]);
  }
  if (points.empty()) {
    throw InputError(
        fmt::format("{}: no selection benchmarks (bench rows of suite 'kernels' "
                    "named 'exact' or 'gaussian'); run commsgd-bench kernels",
                    db.name()));
  }
  json series = json::array();
  for (const auto& [key, by_d] : points) {
    json d = json::array(), seconds = json::array();
    for (const auto& [size, s] : by_d) {
      d.push_back(size);
      seconds.push_back(s);
    }
    series.push_back({{"label", fmt::format("{}, density {}", key.first, key.second)},
                      {"d", d},
                      {"seconds", seconds},
                      {"points", by_d.size()}});
  }
  return {{"kind", "selection"}, {"series", series}};
}

}  // namespace commsgd::report
