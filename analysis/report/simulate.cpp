#include "analysis/report/simulate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "algorithms/catalog.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "analysis/report/papers.hpp"
#include "analysis/report/reports.hpp"

namespace commsgd::report {
namespace {

// Backward's share of forward + backward: about two thirds (it computes two products per
// layer to forward's one).
constexpr double kBackwardShare = 2.0 / 3.0;

// A run's configuration and its steady-state phase times.
struct MeasuredRun {
  std::string id, model, network;
  std::string overlapped_by;  // empty unless the run shared a host with another at the time
  Exchange exchange;
  bool on_thread = false;  // as run: communicates_on_a_thread
  double total = 0, communicate = 0, wait = 0, forward_backward = 0, select = 0;
  // The median over the steady windows of what exposed() averages: one window in which the
  // process was held up, at several times the others' time, moves a mean of latency-bound
  // exchanges by half (results/costmodel/README.md).
  double exposed_median = 0;

  // What the iteration spent waiting for communication, as measured.
  double exposed() const { return on_thread ? wait : communicate; }
  double not_communicating() const { return total - exposed(); }
};

std::string text_of(const Value& v) {
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
}

// The selected runs that recorded steps and their parameter count (runs recorded before
// commsgd-train wrote it into the config are left out).
std::vector<MeasuredRun> measured_runs(const Connection& db, const std::vector<Filter>& filters) {
  const RunSet runs = selected_runs(db, filters);
  const Table t = db.query(fmt::format(R"sql(
    SELECT r.id, r.algo, r.aggregation, r.topology, r.model, r.network, r.workers,
           json_extract(r.config, '$.parameters'), coalesce(json_extract(r.config, '$.bucket_mb'), 0),
           coalesce(json_extract(r.config, '$.wire_dtype'), 'fp32'),
           coalesce(json_extract(r.config, '$.peers_per_iter'), 1),
           f.steady_density,
           b.total_s, b.communicate_s, b.wait_s, b.forward_backward_s, b.select_s,
           s.overlapped_by, f.communicate_s_median, f.wait_s_median,
           coalesce(json_extract(r.config, '$.qsgd_levels'), 4),
           coalesce(json_extract(r.config, '$.qsgd_bucket'), 512)
    FROM runs r JOIN time_breakdown b ON b.run_id = r.id JOIN run_summary s ON s.run_id = r.id
    JOIN run_figures f ON f.run_id = r.id
    WHERE r.id {} AND json_extract(r.config, '$.parameters') IS NOT NULL
    ORDER BY r.model, r.network, r.algo, r.workers, r.created_at)sql",
                                       runs.in),
                           runs.params);
  const std::optional<MessageTime> merge = calibrated_merge(db);
  std::vector<MeasuredRun> out;
  for (const Row& row : t.rows) {
    MeasuredRun m;
    m.id = text_of(row[0]);
    m.model = text_of(row[4]);
    m.network = text_of(row[5]);
    Exchange& e = m.exchange;
    e.algo = text_of(row[1]);
    e.aggregation = text_of(row[2]);
    e.topology = text_of(row[3]);
    e.workers = static_cast<int>(as_double(row[6]));
    e.parameters = as_double(row[7]);
    const double bucket_bytes = as_double(row[8]) * (1 << 20);
    e.wire_bytes = text_of(row[9]) == "fp32" ? 4 : 2;
    e.buckets = bucket_bytes > 0 ? std::ceil(4 * e.parameters / bucket_bytes) : 1;
    e.bucketed = bucket_bytes > 0;
    e.peers_per_iter = static_cast<int>(as_double(row[10]));
    e.entries = as_double(row[11]) * e.parameters;
    e.qsgd_levels = as_double(row[20]);
    e.qsgd_bucket = as_double(row[21]);
    const algorithms::AggregationRow* aggregation =
        algorithms::aggregation_table().lookup(e.aggregation);
    if (aggregation != nullptr && aggregation->traffic == algorithms::Traffic::gtopk_rounds &&
        merge) {
      e.merge_seconds = merge->seconds(e.entries);
    }
    m.on_thread = communicates_on_a_thread(e);
    m.total = as_double(row[12]);
    m.communicate = as_double(row[13]);
    m.wait = as_double(row[14]);
    m.forward_backward = as_double(row[15]);
    m.select = as_double(row[16]);
    m.overlapped_by = text_of(row[17]);
    // The median over the run's steady windows (each has some: time_breakdown is made of them).
    m.exposed_median = as_double(row[m.on_thread ? 19 : 18]);
    out.push_back(std::move(m));
  }
  if (out.empty()) {
    throw InputError(fmt::format(
        "{}: no selected run has steps and a parameter count (recorded since commsgd-train "
        "writes `parameters` into the run's config)",
        db.name()));
  }
  return out;
}

double predicted_seconds(const MeasuredRun& m, const Exchange& e, const Link& link) {
  const double computing = m.not_communicating();
  return computing + exposed_seconds(e, link, computing, kBackwardShare * m.forward_backward);
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// Per model and algorithm: the runs' mean selection time and their exchange (the last run's,
// for the per-worker quantities: d, achieved density, buckets).
struct AlgorithmProfile {
  MeasuredRun typical;
  double select = 0;
  int runs = 0;
};

// Per model: the computation every algorithm shares (its dense runs' mean time besides
// communication, or as given; none without either), and a profile per algorithm.
struct ModelProfile {
  std::optional<double> computing;
  std::map<std::string, AlgorithmProfile> algorithms;
};

// Runs that overlapped others measured their load too: left out of the computation and selection
// the predictions start from.
std::map<std::string, ModelProfile> profiles(const std::vector<MeasuredRun>& runs) {
  std::map<std::string, std::map<std::string, std::vector<const MeasuredRun*>>> grouped;
  for (const MeasuredRun& m : runs) {
    if (m.overlapped_by.empty()) grouped[m.model][m.exchange.algo].push_back(&m);
  }
  std::map<std::string, ModelProfile> out;
  for (const auto& [model, algos] : grouped) {
    ModelProfile& profile = out[model];
    for (const auto& [algo, members] : algos) {
      std::vector<double> selects, computing;
      for (const MeasuredRun* m : members) {
        selects.push_back(m->select);
        computing.push_back(m->not_communicating());
      }
      profile.algorithms[algo] = {*members.back(), mean(selects), static_cast<int>(members.size())};
      if (algo == algorithms::baseline_algorithm()) profile.computing = mean(computing);
    }
  }
  return out;
}

// The profiles of the selected runs, with the computation of the models in `compute` given: such
// a model needs no dense run. What else a prediction takes is still measured, so each model needs
// selected runs.
std::map<std::string, ModelProfile> profiles(const std::vector<MeasuredRun>& runs,
                                             const ComputeTimes& compute) {
  std::map<std::string, ModelProfile> out = profiles(runs);
  for (const auto& [model, seconds] : compute) {
    const auto profile = out.find(model);
    if (profile == out.end()) {
      throw InputError(fmt::format(
          "--compute-ms {}: no run of model {} selected; the computation is all it replaces, and "
          "each algorithm's parameter count, density and selection time come from its runs",
          model, model));
    }
    profile->second.computing = seconds;
  }
  return out;
}

// The predicted time of an algorithm at P workers: the model's computation, the algorithm's
// selection, and the communication it waits for. The model must have a computation.
double predicted_at(const ModelProfile& model, const AlgorithmProfile& algorithm, int workers,
                    const Link& link) {
  Exchange e = algorithm.typical.exchange;
  e.workers = workers;
  MeasuredRun m = algorithm.typical;
  m.total = model.computing.value() + algorithm.select;
  m.communicate = m.wait = 0;
  return predicted_seconds(m, e, link);
}

// Why the paper's row for `algo` on `model` has no prediction, or nothing when it has one: the
// algorithm's own runs give its exchange and selection, and the model needs a computation.
std::string missing_for(const std::string& model, const std::string& algo,
                        const ModelProfile* profile) {
  const bool computing = profile != nullptr && profile->computing.has_value();
  const bool runs = profile != nullptr && profile->algorithms.contains(algo);
  if (runs && computing) return "";
  // Dense's runs give its computation too.
  if (algo == algorithms::baseline_algorithm()) {
    return fmt::format("no dense runs of {} selected", model);
  }
  if (!runs && !computing) return fmt::format("no {} and dense runs of {} selected", algo, model);
  if (!runs) return fmt::format("no {} runs of {} selected", algo, model);
  return fmt::format("no dense runs of {} selected for its computation (or --compute-ms {}=MS)",
                     model, model);
}

}  // namespace

Table simulate_check_report(const Connection& db, const std::vector<Filter>& filters,
                            std::optional<Link> link) {
  const std::map<std::string, Link> links = calibrated_links(db);
  Table t{
      {"run_id", "algo", "model", "workers", "network", "alpha_s", "beta_s_per_byte", "measured_s",
       "predicted_s", "error", "communication_measured_s", "communication_predicted_s",
       "communication_error", "communication_median_s", "communication_median_error", "note"},
      {}};
  for (const MeasuredRun& m : measured_runs(db, filters)) {
    std::optional<Link> used = link;
    if (!used && links.contains(m.network)) used = links.at(m.network);
    Row row = {m.id, m.exchange.algo, m.model, std::int64_t{m.exchange.workers}, m.network};
    if (!used) {
      row.insert(row.end(), {Value{}, Value{}, m.total, Value{}, Value{}, m.exposed(), Value{},
                             Value{}, m.exposed_median, Value{},
                             fmt::format("no pingpong alpha-beta for network {} in the bench "
                                         "table (commsgd-bench pingpong --network {})",
                                         m.network, m.network)});
    } else {
      const double predicted = predicted_seconds(m, m.exchange, *used);
      const double communication = predicted - m.not_communicating();
      std::string note = priced_as(m.exchange);
      if (m.exchange.merge_seconds > 0) {
        note += fmt::format("{}merge {:.3g} us a round", note.empty() ? "" : "; ",
                            1e6 * m.exchange.merge_seconds);
      }
      if (!m.overlapped_by.empty()) {
        note += fmt::format("{}overlapped {}: measured beside another run's load",
                            note.empty() ? "" : "; ", m.overlapped_by);
      }
      const auto error_against = [&](double measured) {
        return measured > 0 ? Value{communication / measured - 1} : Value{};
      };
      row.insert(row.end(),
                 {used->exchange.alpha, used->exchange.beta, m.total, predicted,
                  predicted / m.total - 1, m.exposed(), communication, error_against(m.exposed()),
                  m.exposed_median, error_against(m.exposed_median), note});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table simulate_scaling_report(const Connection& db, const std::vector<Filter>& filters,
                              const Link& link, int max_workers, const ComputeTimes& compute) {
  Table t{{"model", "algo", "runs", "compute_s", "select_s"}, {}};
  for (int p = 1; p <= max_workers; p *= 2) t.columns.push_back(fmt::format("P={}", p));
  for (const auto& [model, profile] : profiles(measured_runs(db, filters), compute)) {
    if (!profile.computing) continue;  // the baseline every efficiency is taken against
    for (const auto& [algo, algorithm] : profile.algorithms) {
      Row row = {model, algo, std::int64_t{algorithm.runs}, *profile.computing, algorithm.select};
      for (int p = 1; p <= max_workers; p *= 2) {
        row.emplace_back(std::in_place_type<double>,
                         *profile.computing / predicted_at(profile, algorithm, p, link));
      }
      t.rows.push_back(std::move(row));
    }
  }
  if (t.rows.empty()) {
    throw InputError(db.name() +
                     ": no selected model has a dense run or a --compute-ms to scale against");
  }
  return t;
}

Table simulate_paper_report(const Connection& db, const std::vector<Filter>& filters,
                            const Link& link, const ComputeTimes& compute, bool compute_of_paper) {
  auto measured = profiles(measured_runs(db, filters), compute);
  std::set<std::string> of_paper;  // models computing as the paper's time breakdown says
  if (compute_of_paper) {
    for (const PaperValue& v : paper("gtopk").values) {
      const auto model = measured.find(v.model);
      if (v.quantity == "computation per iteration" && model != measured.end()) {
        model->second.computing = v.value;
        of_paper.insert(v.model);
      }
    }
  }
  Table t{{"model", "algo", "workers", "source", "paper", "predicted", "difference", "compute_s",
           "select_s", "note"},
          {}};
  // The gTop-k paper's scaling efficiency at 32 workers on 1 GbE (results/papers.toml).
  for (const PaperValue& p : paper("gtopk").values) {
    if (p.quantity != "scaling efficiency" || p.workers != 32) continue;
    Row row = {p.model, p.algo, std::int64_t{32}, p.source, p.value};
    const auto model = measured.find(p.model);
    const std::string missing =
        missing_for(p.model, p.algo, model == measured.end() ? nullptr : &model->second);
    if (!missing.empty()) {
      row.insert(row.end(), {Value{}, Value{}, Value{}, Value{}, missing});
    } else {
      const ModelProfile& profile = model->second;
      const AlgorithmProfile& algorithm = profile.algorithms.at(p.algo);
      const double predicted = *profile.computing / predicted_at(profile, algorithm, 32, link);
      row.insert(row.end(), {predicted, predicted - p.value, *profile.computing, algorithm.select,
                             std::string(of_paper.contains(p.model)
                                             ? "computation of the paper, selection measured here"
                                         : compute.contains(p.model)
                                             ? "computation given, selection measured here"
                                             : "compute and selection measured here")});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace commsgd::report
