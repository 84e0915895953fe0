#include "analysis/report/configurations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "analysis/report/sqlite.hpp"
#include "common/stable_hash.hpp"

namespace commsgd::report {
namespace {

using nlohmann::json;

// What a run's config holds besides its configuration, for runs recorded before the trainer
// listed it (config.not_in_configuration): the options its trainer declared as changing nothing
// computed, the seed, and what the trainer added of its own (the transport environment, with
// per-launch ids in it, and the parameter count, which the model decides).
const std::vector<std::string> kOutsideBeforeTheList = {"checkpoint_dir",
                                                        "checkpoint_every",
                                                        "checkpoint_every_steps",
                                                        "db",
                                                        "db_dir",
                                                        "dump_params",
                                                        "loader_threads",
                                                        "network",
                                                        "quiet",
                                                        "resume",
                                                        "threads",
                                                        "seed",
                                                        "network_environment",
                                                        "parameters"};

// The runs table's columns that name what was computed: resolved (the selector and aggregation
// an algorithm's defaults gave, for one), so they stand over the config's options of those names.
constexpr const char* kResolvedColumns[] = {"algo",       "selector", "aggregation", "topology",
                                            "model",      "dataset",  "device",      "density",
                                            "batch_size", "lr",       "epochs"};

json parsed_object(const Value& text) {
  if (!std::holds_alternative<std::string>(text)) return json::object();
  json config = json::parse(std::get<std::string>(text), nullptr, false);
  return config.is_object() ? config : json::object();
}

json cell_json(const Value& v) {
  if (std::holds_alternative<std::int64_t>(v)) return std::get<std::int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return nullptr;
}

}  // namespace

std::vector<RunConfiguration> run_configurations(const Connection& db, const std::string& in,
                                                 const std::vector<Value>& params) {
  const Table t =
      db.query(fmt::format("SELECT id, config, {} FROM runs WHERE id {} ORDER BY created_at, id",
                           fmt::join(kResolvedColumns, ", "), in),
               params);
  std::vector<RunConfiguration> out;
  for (const Row& row : t.rows) {
    json options = parsed_object(row[1]);
    std::vector<std::string> outside = kOutsideBeforeTheList;
    if (const auto listed = options.find("not_in_configuration");
        listed != options.end() && listed->is_array()) {
      outside.assign(listed->begin(), listed->end());
    }
    outside.push_back("not_in_configuration");
    for (const std::string& key : outside) options.erase(key);
    for (std::size_t c = 0; c < std::size(kResolvedColumns); ++c) {
      options[kResolvedColumns[c]] = cell_json(row[c + 2]);
    }
    out.push_back({std::get<std::string>(row[0]), std::move(options)});
  }
  return out;
}

std::string configuration_id(const json& options) {
  // Of the canonical text (nlohmann's objects keep their keys sorted), folded to 32 bits.
  const std::uint64_t hash = stable_hash(options.dump());
  return fmt::format("{:08x}", static_cast<std::uint32_t>(hash ^ (hash >> 32)));
}

std::vector<std::string> differing_options(const std::vector<const json*>& configurations,
                                           const std::vector<std::string>& shown) {
  std::set<std::string> keys;
  for (const json* c : configurations) {
    for (const auto& [key, value] : c->items()) keys.insert(key);
  }
  std::vector<std::string> differing;
  for (const std::string& key : keys) {
    if (std::find(shown.begin(), shown.end(), key) != shown.end()) continue;
    const auto value_of = [&](const json* c) { return c->contains(key) ? (*c)[key] : json(); };
    const json first = value_of(configurations.front());
    if (std::any_of(configurations.begin(), configurations.end(),
                    [&](const json* c) { return value_of(c) != first; })) {
      differing.push_back(key);
    }
  }
  return differing;
}

Value option_cell(const json& options, const std::string& key) {
  const auto found = options.find(key);
  if (found == options.end() || found->is_null()) return std::monostate{};
  if (found->is_number_integer()) return found->get<std::int64_t>();
  if (found->is_number()) return found->get<double>();
  if (found->is_string()) return found->get<std::string>();
  if (found->is_boolean()) return std::int64_t{found->get<bool>() ? 1 : 0};
  return found->dump();
}

}  // namespace commsgd::report
