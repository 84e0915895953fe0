#pragma once

#include <CLI/App.hpp>
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

// Computes for at least `seconds` as a training step does, forward and backward passes of an MLP
// 64-`hidden`-10 in LibTorch on one thread, so that what runs next starts with the data and
// instruction caches and the branch history such a step leaves: after it a first small exchange
// takes longer than after a loop sweeping memory, and about what commsgd-train's exchanges take
// (results/costmodel/README.md). The width decides how much of the
// caches the step displaces; 2048 is the width of the cost model's check runs. Its batch narrows
// as it widens (16 384 / hidden rows, at least one), so that a pass costs what 512 wide at batch
// 32 does, and a short computation ends close to `seconds`. Returns a value of the computation,
// for the caller to use.
float compute_for(double seconds, int hidden);

// The width compute_for takes when none is asked for: the MLP of the calibrations recorded before
// it could be set.
constexpr int kComputeHidden = 512;

// --compute-hidden, compute_for's width, for a subcommand that computes before what it times.
void add_compute_hidden_option(CLI::App& cmd, int& hidden);

}  // namespace commsgd::bench
