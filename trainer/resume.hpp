// Resuming: which checkpoint a run continues from, and putting it in place of what a fresh start
// built; with it the LibTorch random state a checkpoint carries.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "trainer/checkpoint.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/options.hpp"

namespace commsgd::trainer {

// Collective. --resume DIR, or with --resume auto the newest checkpoint every rank can read
// (rank 0's listing of --checkpoint-dir says which exist), older ones tried in turn; nullopt (and
// a line saying so) when there is none. One that was taken with another number of workers or
// other options is a UsageError.
std::optional<RankCheckpoint> find_resume_checkpoint(const Options& o, comm::Communicator& comm);

// Takes into a checkpoint what restore() puts back: the parameters, the module buffers,
// LibTorch's random state and the algorithm's state (which may first wait for messages in
// flight). The loop adds its own: position, optimizer state, data order, sums.
void capture(RankCheckpoint& c, FlatParameters& flat, algorithms::Algorithm& algorithm);

// Puts a checkpoint's model and algorithm state in place of the freshly built ones.
void restore(const RankCheckpoint& c, FlatParameters& flat, algorithms::Algorithm& algorithm);

}  // namespace commsgd::trainer
