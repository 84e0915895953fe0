// A run's configuration: every setting that changes what it computes, except the seed. Runs of one
// configuration differ only in their seed (and where and when they ran), so the reports average
// them, and only them: two runs that differ in density, batch size, topology or wire type are two
// configurations, never blended into one mean.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

// What the runs table says of a run (its resolved algorithm, selector, aggregation and the like)
// and its config JSON (runs.config, every option by its flag's name; NULL for runs written by
// other tools). The configuration is the config's options, less those its `not_in_configuration`
// list names (the trainer's options that change nothing computed: files, threads, checkpoints,
// the network label, and the seed), with the runs table's resolved values over them. Runs
// recorded before that list use the list their trainer had (kept in configurations.cpp).
struct RunConfiguration {
  std::string run_id;
  nlohmann::json options;  // an object, keys sorted
  std::string text() const { return options.dump(); }
};

// The configuration of every run of `db` that `run_ids` names (SQL after "run_id", as RunSet.in).
std::vector<RunConfiguration> run_configurations(const Connection& db, const std::string& in,
                                                 const std::vector<Value>& params);

// A short stable name of a configuration (hex), for the runs and convergence reports.
std::string configuration_id(const nlohmann::json& options);

// The options whose values differ among `configurations`, sorted, less those in `shown`.
std::vector<std::string> differing_options(const std::vector<const nlohmann::json*>& configurations,
                                           const std::vector<std::string>& shown);

// An option's value as a table cell: numbers as numbers, text as text, the rest as JSON text;
// null when a configuration does not have the option.
Value option_cell(const nlohmann::json& options, const std::string& key);

}  // namespace commsgd::report
