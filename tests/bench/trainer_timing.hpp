// What the benchmarks that time commsgd-train itself share: a run on synthetic data in this
// process (one rank, MPI_COMM_SELF), timed per iteration after a warm-up.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "trainer/options.hpp"

namespace commsgd::bench {

// --algo dense on `iterations` batches of synthetic samples of `shape` (C, H, W), one epoch,
// quiet, recorded under `scratch`.
trainer::Options synthetic_training(const std::string& model, const std::vector<int>& shape,
                                    int batch_size, int iterations, int threads,
                                    const std::filesystem::path& scratch);
// Trains `o` and returns the mean seconds per iteration after the first `warmup`.
double seconds_per_iteration(const trainer::Options& o, int warmup);

}  // namespace commsgd::bench
