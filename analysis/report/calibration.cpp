#include "analysis/report/calibration.hpp"

#include <vector>

#include "analysis/report/median.hpp"

namespace commsgd::report {
namespace {

// A suite's measurements of one network, over its calibrations: each value's and each measured
// size's time's list, one entry per calibration that has it.
struct Measurements {
  int calibrations = 0;
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::map<double, std::vector<double>>> sized;  // name → size → seconds
};

// The rows of `suite` by network ("" for a suite without one). The rows one benchmark run wrote
// share their host and created_at: one calibration. A row with a size (its bytes, its k, or the
// seconds computed before it) is a measured time, one without a fitted value.
std::map<std::string, Measurements> measurements(const Connection& db, const std::string& suite) {
  const Table t = db.query(R"sql(
    SELECT CAST(coalesce(json_extract(params, '$.network'), '') AS TEXT),
           host || ' ' || created_at, name, value,
           coalesce(json_extract(params, '$.bytes'), json_extract(params, '$.k'),
                    json_extract(params, '$.computed_s'))
    FROM bench
    WHERE suite = ?
    ORDER BY created_at, id)sql",
                           {suite});
  std::map<std::string, Measurements> out;
  std::map<std::string, std::string> last_run;  // by network
  for (const Row& row : t.rows) {
    const std::string& network = std::get<std::string>(row[0]);
    const std::string& run = std::get<std::string>(row[1]);
    const std::string& name = std::get<std::string>(row[2]);
    Measurements& m = out[network];
    if (last_run[network] != run) {
      last_run[network] = run;
      ++m.calibrations;
    }
    if (std::holds_alternative<std::monostate>(row[4])) {
      m.values[name].push_back(as_double(row[3]));
    } else {
      m.sized[name][as_double(row[4])].push_back(as_double(row[3]));
    }
  }
  return out;
}

// What the model takes from a suite's measurements: each value's median, and each measured
// size's median time, sizes ascending.
struct Medians {
  int calibrations = 0;
  std::map<std::string, double> values;
  std::map<std::string, std::vector<std::pair<double, double>>> sized;

  double value(const std::string& name) const {
    const auto v = values.find(name);
    return v == values.end() ? 0 : v->second;
  }
  std::vector<std::pair<double, double>> by_size(const std::string& name) const {
    const auto s = sized.find(name);
    return s == sized.end() ? std::vector<std::pair<double, double>>{} : s->second;
  }
  // A fit and its measured sizes: `prefix` alpha and beta, and the sizes of `sized_name`.
  MessageTime message_time(const std::string& prefix, const std::string& sized_name) const {
    return {value(prefix + "alpha"), value(prefix + "beta"), by_size(sized_name)};
  }
};

// The medians of each suite's measurements, by network.
std::map<std::string, Medians> medians(const Connection& db, const std::string& suite) {
  std::map<std::string, Medians> out;
  for (const auto& [network, m] : measurements(db, suite)) {
    Medians& to = out[network];
    to.calibrations = m.calibrations;
    for (const auto& [name, values] : m.values) to.values[name] = median(values);
    for (const auto& [name, sizes] : m.sized) {
      for (const auto& [size, seconds] : sizes) to.sized[name].emplace_back(size, median(seconds));
    }
  }
  return out;
}

bool fitted(const MessageTime& time) {
  return time.alpha > 0 && time.beta > 0;
}

}  // namespace

std::map<std::string, Link> calibrated_links(const Connection& db) {
  std::map<std::string, Link> links;
  for (const auto& [network, m] : medians(db, "pingpong")) {
    const MessageTime one_way = m.message_time("", "one_way_seconds");
    const MessageTime exchange = m.message_time("exchange_", "exchange_seconds");
    const MessageTime after_idle = m.message_time("after_idle_", "after_idle_exchange_seconds");
    if (!fitted(one_way)) continue;
    Link& link = links[network];
    link.exchange = fitted(exchange) ? exchange : one_way;
    link.one_way = one_way;
    link.follow_on_extra = follow_on_extra(link.exchange, m.by_size("collective_steps_seconds"));
    // Calibrations since the ping-pong has an after-idle sweep measured the burst too.
    if (after_idle.alpha > 0 && m.values.contains("burst_bytes")) {
      link.after_idle = after_idle;
      link.burst_bytes = m.value("burst_bytes");
      link.latency_after_idle = m.by_size("after_idle_latency_seconds");
    }
  }
  return links;
}

std::optional<MessageTime> calibrated_merge(const Connection& db) {
  const std::map<std::string, Medians> merge = medians(db, "merge");
  if (!merge.contains("")) return std::nullopt;
  const MessageTime time = merge.at("").message_time("gtopk_merge_", "gtopk_merge_seconds");
  if (time.measured.empty()) return std::nullopt;
  return time;
}

Table calibration_report(const Connection& db) {
  Table t{{"suite", "network", "calibrations", "name", "size", "value"}, {}};
  for (const std::string suite : {"pingpong", "merge"}) {
    for (const auto& [network, m] : medians(db, suite)) {
      const std::int64_t n = m.calibrations;
      for (const auto& [name, value] : m.values) {
        t.rows.push_back({suite, network, n, name, Value{}, value});
      }
      for (const auto& [name, sizes] : m.sized) {
        for (const auto& [size, seconds] : sizes) {
          t.rows.push_back({suite, network, n, name, size, seconds});
        }
      }
    }
  }
  return t;
}

}  // namespace commsgd::report
