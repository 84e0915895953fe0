// commsgd-report simulate: the α-β cost model (cost_model.hpp) fed with what runs measured. Each
// run's time besides communication (data, forward/backward, selection, update) is taken as
// measured; its communication is predicted from the algorithm, P, d, k, the link's α and β
// (commsgd-bench pingpong, per network) and, for gTop-k, its merge's time on these hosts
// (commsgd-bench merge; calibration.hpp), so the prediction tests the communication model.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report/calibration.hpp"
#include "analysis/report/cost_model.hpp"
#include "analysis/report/filters.hpp"
#include "analysis/report/sqlite.hpp"

namespace commsgd::report {

// The 1 GbE link the gTop-k paper measured (docs/design.md, "Reference numbers").
inline const Link kPaperGigabitEthernet = plain_link(0.436e-3, 9e-9);

// One row per selected run: measured and predicted seconds per iteration and of communication,
// each with its relative error (predicted/measured − 1), with the link used: `link` when given,
// else the calibration of the run's network (a note says when there is none).
Table simulate_check_report(const Connection& db, const std::vector<Filter>& filters,
                            std::optional<Link> link);

// Seconds an iteration of a model computes (everything but communication), by model name, to
// use instead of what its selected dense runs measured (--compute-ms): a GPU's iteration time,
// say, so that a prediction for a GPU cluster does not start from this machine's CPU. Such a
// model needs no dense run; each algorithm's parameter count, density and selection time still
// come from its selected runs. The reports throw InputError for a model with no selected run.
using ComputeTimes = std::map<std::string, double>;

// Predicted scaling efficiency (the model's computation, its 1-worker dense time, over the
// predicted time) of every algorithm recorded for each selected model with a computation, at
// P = 1, 2, 4, ... up to max_workers, over `link`.
Table simulate_scaling_report(const Connection& db, const std::vector<Filter>& filters,
                              const Link& link, int max_workers, const ComputeTimes& compute);

// Each model of the gTop-k paper's scaling-efficiency table (results/papers.toml) at 32 workers
// over `link`: the predicted scaling efficiency of dense, topk and gtopk beside the paper's, with
// the difference; computation (unless given) and selection from the selected runs of that model
// (a note says which runs a row lacks); with `compute_of_paper`, computation from the paper's time
// breakdown for the models it gives, so that only communication is predicted.
Table simulate_paper_report(const Connection& db, const std::vector<Filter>& filters,
                            const Link& link, const ComputeTimes& compute, bool compute_of_paper);

}  // namespace commsgd::report
