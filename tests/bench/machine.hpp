#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/record/run_database.hpp"

namespace commsgd::bench {

// A `bench` row stamped with this machine (host, cores) and this build.
record::BenchRow bench_row(const std::string& suite, const std::string& name,
                           const nlohmann::json& params, double value, const std::string& unit);

}  // namespace commsgd::bench
