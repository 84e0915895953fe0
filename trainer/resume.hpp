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

// LibTorch's default CPU generator (dropout, data order where LibTorch draws it), as bytes.
std::vector<std::byte> torch_rng_state();
void set_torch_rng_state(std::span<const std::byte> bytes);

// Collective. --resume DIR, or with --resume auto the newest checkpoint every rank can read, older
// ones tried in turn; nullopt (and a line saying so) when there is none. One that was taken with
// another number of workers or other options is a UsageError.
std::optional<RankCheckpoint> find_resume_checkpoint(const Options& o, comm::Communicator& comm);

// Puts a checkpoint's model and algorithm state in place of the freshly built ones.
void restore(const RankCheckpoint& c, FlatParameters& flat, algorithms::Algorithm& algorithm);

}  // namespace commsgd::trainer
