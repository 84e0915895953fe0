#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/record/run_database.hpp"

namespace commsgd::bench {

// A `bench` row stamped with this machine (host, cores) and this build.
record::BenchRow bench_row(const std::string& suite, const std::string& name,
                           const nlohmann::json& params, double value, const std::string& unit);

// Adds the rows to db's bench table and says where they went.
void record_bench(const std::string& db, const std::vector<record::BenchRow>& rows);

// The median of repeated measurements (the upper one of an even count).
double median(std::vector<double> v);

}  // namespace commsgd::bench
