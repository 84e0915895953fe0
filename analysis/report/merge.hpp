// Merging run databases: copies what a source has and the destination lacks, so that merging the
// same file twice, or files that share runs, never duplicates anything.
#pragma once

#include <cstdint>

#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

struct MergeCounts {
  std::int64_t runs_added = 0, runs_updated = 0, epochs = 0, steps = 0, grad_stats = 0,
               norm_study = 0, ranks = 0, bench = 0;
};

// One transaction on `dest`. Runs are keyed by id; a run that `dest` holds as still running and
// `source` holds as ended takes the source's row (merging again after a job finished brings its
// final status; ranks likewise take their end). Epochs, steps, grad_stats and norm_study are keyed
// by run and epoch/step, ranks by run, rank and start; bench
// rows, whose ids are per file, by their content. `dest` has this build's schema version; an
// older `source` reads as migrated (open_run_database). The figures and overlaps of the source's
// runs (run_figures.hpp) are recomputed in `dest`, whose other runs they may overlap, unless the
// caller will recompute every run's once it has merged several sources.
enum class MergedFigures { refresh, leave_to_caller };
MergeCounts merge_into(const Connection& dest, const Connection& source,
                       MergedFigures figures = MergedFigures::refresh);

}  // namespace commsgd::report
