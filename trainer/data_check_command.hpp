// commsgd-train --check-data: the data set read whole, its bad files listed, an exit code a job
// script can act on before it starts a long run.
#pragma once

#include "trainer/options.hpp"

namespace commsgd::trainer {

// Reads the data set of `options` (data/data_check.hpp). Prints a line for what it reads, each bad
// file's line, each class holding a bad file with its count, and a summary to stdout; progress
// with an ETA to stderr (a live line on a terminal, else a line each tenth). Returns
// kExitCompleted if every file was read, kExitBadInput if any was bad.
int run_data_check(const Options& options);

}  // namespace commsgd::trainer
