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

// Computes for at least `seconds` as a training step does, forward and backward passes of a small
// MLP in LibTorch on one thread, so that what runs next starts with the data and instruction
// caches and the branch history such a step leaves: after it, a first exchange of 8 bytes took
// 16–22 µs over the emulated 1 Gbit/s link after 0.6 ms, where after a loop sweeping 4 MiB it
// took 10–14 µs (commsgd-train's 1.2 kB exchange: 19–21 µs). Returns a value of the
// computation, for the caller to use.
float compute_for(double seconds);

}  // namespace commsgd::bench
