#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/extension_table.hpp"
#include "algorithms/own_options.hpp"
#include "algorithms/traffic.hpp"

namespace commsgd::algorithms {

// The families of docs/design.md: what an algorithm exchanges (which options a row takes is its
// own_options).
// Compressed: every rank's whole gradient, encoded (signs, levels, a low-rank factor) and decoded.
enum class Family { dense, sparse, compressed, gossip };
std::string_view family_name(Family family);  // "dense", "sparse", "compressed", "gossip"

using AlgorithmFactory = std::unique_ptr<Algorithm> (*)(const AlgorithmConfig&,
                                                        comm::Communicator&);

// One row per algorithm: everything else (--algo's choices and help, the option groups, the
// checks of which option applies to which algorithm, the factory) is derived from the table.
struct AlgorithmRow {
  std::string_view name;  // the value of --algo
  Family family;
  std::string_view summary;  // one line for --help: what crosses the network
  // Defaults filled into a config that leaves them empty: a sparse row's selector and
  // aggregation, a gossip row's topology.
  std::string_view selector = {};
  std::string_view aggregation = {};
  std::string_view topology = {};
  // What an iteration sends and which thread sends it, for commsgd-report's cost model.
  Traffic traffic = Traffic::unstated;
  Overlap overlap = Overlap::none;
  // The options only some algorithms take that this one does: its family's (--selector, ...,
  // --topology) and its own (--qsgd-levels, ...); --barrier-before-communicate where the training
  // thread waits for the exchange (dense only with --bucket-mb 0).
  OwnOptions own_options = {};
  AlgorithmFactory make = nullptr;  // given the resolved config
};

// The algorithms of this build: the built-in rows, then those added with add_algorithm().
ExtensionTable<AlgorithmRow>& algorithm_table();

// Adds a row to the table (an extension's or a test's own algorithm), before options are parsed.
// Throws std::invalid_argument when the name is taken or the row has no factory.
void add_algorithm(const AlgorithmRow& row);

// Throws UnknownName ("--algo: unknown algorithm 'x' (dense, ...)") for a name not in
// the table.
const AlgorithmRow& find_algorithm(std::string_view name);

std::vector<std::string> algorithm_names(Family family);  // the rows of one family
std::string algorithm_list(Family family);                // "topk, gtopk, gaussiank"

// The algorithm comparisons measure speedup against and whose runs give a model's computation
// (commsgd-report compare and simulate): the row named kBaselineAlgorithm, S-SGD.
std::string_view baseline_algorithm();

// What an iteration of `row` sends, with a sparse row's taken from its aggregation's row
// (`aggregation`, or the row's default where empty). Throws UnknownName for an unknown
// aggregation.
Traffic traffic_of(const AlgorithmRow& row, std::string_view aggregation = {});

// Given when its value in `config` (which must outlive the result) differs from
// AlgorithmConfig's default: for a config built in code. Knows every option a row lists; throws
// std::logic_error for another.
OptionGiven set_apart_from_default(const AlgorithmConfig& config);

// The options given for `config` that its algorithm does not take (own_options_not_taken), then
// --barrier-before-communicate for dense with buckets. commsgd-train passes what its parser
// counted, so an option given at its default value counts; without `given`,
// set_apart_from_default(config). commsgd-train refuses them on its command line but leaves them
// out of a config file, which may hold the options of several algorithms. Throws UnknownName for
// an unknown algorithm.
std::vector<OptionNotTaken> options_not_taken(const AlgorithmConfig& config);
std::vector<OptionNotTaken> options_not_taken(const AlgorithmConfig& config,
                                              const OptionGiven& given);

// Fills in the row's defaults; throws std::invalid_argument, naming the option, for an option
// given to an algorithm it does not apply to (e.g. --selector with --algo dense: the first of
// options_not_taken) and for options that do not go together.
AlgorithmConfig resolve(AlgorithmConfig config);

// Resolves the config and builds its row's algorithm; throws std::invalid_argument naming the
// problem (unknown algorithm, a topology the algorithm cannot use, ...).
std::unique_ptr<Algorithm> make_algorithm(const AlgorithmConfig& config, comm::Communicator& comm);

}  // namespace commsgd::algorithms
