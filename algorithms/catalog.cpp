#include "algorithms/catalog.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/baseline_algorithm.hpp"
#include "algorithms/compressed/ef_signsgd.hpp"
#include "algorithms/compressed/powersgd.hpp"
#include "algorithms/compressed/qsgd.hpp"
#include "algorithms/compressed/signsgd.hpp"
#include "algorithms/dense.hpp"
#include "algorithms/gossip/adpsgd.hpp"
#include "algorithms/gossip/dpsgd.hpp"
#include "algorithms/gossip/osgp.hpp"
#include "algorithms/gossip/sgp.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/sparse/sparse_sgd.hpp"

namespace commsgd::algorithms {
namespace {

std::unique_ptr<Algorithm> make_dense(const AlgorithmConfig& c, comm::Communicator& comm) {
  return make_engine_backed<Dense>(comm, c);
}

// Every sparse row is SparseSgd with its selector × aggregation pair.
std::unique_ptr<Algorithm> make_sparse(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<SparseSgd>(c, comm);
}

std::unique_ptr<Algorithm> make_signsgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<SignSgd>(comm, c);
}

std::unique_ptr<Algorithm> make_ef_signsgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<EfSignSgd>(comm, c);
}

std::unique_ptr<Algorithm> make_powersgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<PowerSgd>(comm, c);
}

std::unique_ptr<Algorithm> make_qsgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<Qsgd>(comm, c);
}

std::unique_ptr<Topology> topology_of(const AlgorithmConfig& c, const comm::Communicator& comm) {
  return make_topology(c.topology, comm.size(), c.peers_per_iter);
}

std::unique_ptr<Algorithm> make_sgp(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<Sgp>(comm, topology_of(c, comm), c.barrier_before_communicate);
}

std::unique_ptr<Algorithm> make_osgp(const AlgorithmConfig& c, comm::Communicator& comm) {
  const int limit = c.osgp_overlap == OsgpOverlap::one_in_flight ? c.synch_freq : c.max_staleness;
  return make_engine_backed<Osgp>(comm, topology_of(c, comm), c.osgp_overlap, limit);
}

std::unique_ptr<Algorithm> make_dpsgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return std::make_unique<Dpsgd>(comm, topology_of(c, comm), c.mixing,
                                 c.barrier_before_communicate);
}

std::unique_ptr<Algorithm> make_adpsgd(const AlgorithmConfig& c, comm::Communicator& comm) {
  return make_engine_backed<Adpsgd>(comm, topology_of(c, comm), c.mixing);
}

// The options only some algorithms take, as each row lists them. --barrier-before-communicate goes
// to the rows whose training thread waits for the exchange.
constexpr std::string_view kBarrier = "--barrier-before-communicate";
constexpr std::string_view kNormStudy = "--norm-study-every";  // updates in gradient units
constexpr std::array<std::string_view, 2> kDenseOptions = {"--wire-dtype", kBarrier};
constexpr std::array<std::string_view, 5> kSparseOptions = {
    "--selector", "--aggregation", "--grad-stats-every", kNormStudy, kBarrier};
constexpr std::array<std::string_view, 1> kSignOptions = {kBarrier};
constexpr std::array<std::string_view, 2> kEfSignOptions = {kNormStudy, kBarrier};
constexpr std::array<std::string_view, 4> kQsgdOptions = {"--qsgd-levels", "--qsgd-bucket",
                                                          kNormStudy, kBarrier};
constexpr std::array<std::string_view, 4> kPowerSgdOptions = {
    "--powersgd-rank", "--powersgd-start-iter", kNormStudy, kBarrier};
constexpr std::array<std::string_view, 2> kSgpOptions = {"--topology", kBarrier};
constexpr std::array<std::string_view, 4> kOsgpOptions = {"--topology", "--osgp-overlap",
                                                          "--max-staleness", "--synch-freq"};
constexpr std::array<std::string_view, 3> kDpsgdOptions = {"--topology", "--gossip-mixing",
                                                           kBarrier};
constexpr std::array<std::string_view, 2> kAdpsgdOptions = {"--topology", "--gossip-mixing"};

ExtensionTable<AlgorithmRow>& rows() {
  static ExtensionTable<AlgorithmRow> table(
      "--algo", "algorithm",
      {
          {.name = kBaselineAlgorithm,
           .family = Family::dense,
           .summary =
               "allreduce of the whole gradient in buckets, overlapped with backward (S-SGD)",
           .traffic = Traffic::bucketed_allreduce,
           .overlap = Overlap::with_backward,
           .own_options = kDenseOptions,
           .make = make_dense},
          {.name = "topk",
           .family = Family::sparse,
           .summary = "allgather of each worker's k largest accumulated gradient entries",
           .selector = "exact",
           .aggregation = "allgather",
           .traffic = Traffic::of_aggregation,
           .own_options = kSparseOptions,
           .make = make_sparse},
          {.name = "gtopk",
           .family = Family::sparse,
           .summary = "global top-k by recursive doubling: log2(P) exchanges of k entries",
           .selector = "exact",
           .aggregation = "gtopk",
           .traffic = Traffic::of_aggregation,
           .own_options = kSparseOptions,
           .make = make_sparse},
          {.name = "gaussiank",
           .family = Family::sparse,
           .summary = "like topk, the entries picked by a Gaussian threshold",
           .selector = "gaussian",
           .aggregation = "allgather",
           .traffic = Traffic::of_aggregation,
           .own_options = kSparseOptions,
           .make = make_sparse},
          {.name = "signsgd",
           .family = Family::compressed,
           .summary = "one bit a gradient entry, its sign; the update is the ranks' majority vote",
           .traffic = Traffic::allgathered_signs,
           .own_options = kSignOptions,
           .make = make_signsgd},
          {.name = "ef-signsgd",
           .family = Family::compressed,
           .summary = "signs scaled by each tensor's mean |entry|, with error feedback",
           .traffic = Traffic::allgathered_signs,
           .own_options = kEfSignOptions,
           .make = make_ef_signsgd},
          {.name = "qsgd",
           .family = Family::compressed,
           .summary =
               "each entry stochastically rounded to s levels of its bucket's norm, unbiased",
           .traffic = Traffic::allgathered_levels,
           .own_options = kQsgdOptions,
           .make = make_qsgd},
          {.name = "powersgd",
           .family = Family::compressed,
           .summary = "each weight matrix as rank-r factors P, Q, two allreduces; error feedback",
           .traffic = Traffic::allreduced_factors,
           .own_options = kPowerSgdOptions,
           .make = make_powersgd},
          {.name = "sgp",
           .family = Family::gossip,
           .summary = "push-sum: a share of (params, weight) to out-peers of a directed graph",
           .topology = "exponential",
           .traffic = Traffic::push_to_peers,
           .own_options = kSgpOptions,
           .make = make_sgp},
          {.name = "osgp",
           .family = Family::gossip,
           .summary = "sgp with the exchange on a communication thread (bounded staleness)",
           .topology = "exponential",
           .traffic = Traffic::push_to_peers,
           .overlap = Overlap::with_step,
           .own_options = kOsgpOptions,
           .make = make_osgp},
          {.name = "dpsgd",
           .family = Family::gossip,
           .summary = "neighbour averaging of the parameters every iteration",
           .topology = "bipartite-exponential",
           .traffic = Traffic::neighbour_average,
           .own_options = kDpsgdOptions,
           .make = make_dpsgd},
          {.name = "adpsgd",
           .family = Family::gossip,
           .summary = "asynchronous pairwise averaging on a gossip thread",
           .topology = "bipartite-exponential",
           .traffic = Traffic::pairwise_average,
           .overlap = Overlap::with_step,
           .own_options = kAdpsgdOptions,
           .make = make_adpsgd},
      });
  return table;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

std::string_view family_name(Family family) {
  switch (family) {
    case Family::dense:
      return "dense";
    case Family::sparse:
      return "sparse";
    case Family::compressed:
      return "compressed";
    case Family::gossip:
      return "gossip";
  }
  return "unknown";
}

ExtensionTable<AlgorithmRow>& algorithm_table() {
  return rows();
}

void add_algorithm(const AlgorithmRow& row) {
  rows().add(row);
}

const AlgorithmRow& find_algorithm(std::string_view name) {
  return rows().find(name);
}

std::vector<std::string> algorithm_names(Family family) {
  std::vector<std::string> names;
  for (const AlgorithmRow& row : rows()) {
    if (row.family == family) names.emplace_back(row.name);
  }
  return names;
}

std::string algorithm_list(Family family) {
  return joined(algorithm_names(family));
}

std::string_view baseline_algorithm() {
  return find_algorithm(kBaselineAlgorithm).name;
}

Traffic traffic_of(const AlgorithmRow& row, std::string_view aggregation) {
  if (row.traffic != Traffic::of_aggregation) return row.traffic;
  return aggregation_table().find(aggregation.empty() ? row.aggregation : aggregation).traffic;
}

OptionGiven set_apart_from_default(const AlgorithmConfig& config) {
  return [&config](std::string_view flag) {
    const AlgorithmConfig defaults;
    if (flag == "--selector") return !config.selector.empty();
    if (flag == "--aggregation") return !config.aggregation.empty();
    if (flag == "--topology") return !config.topology.empty();
    if (flag == "--gossip-mixing") return config.mixing != defaults.mixing;
    if (flag == "--osgp-overlap") return config.osgp_overlap != defaults.osgp_overlap;
    if (flag == "--max-staleness") return config.max_staleness != defaults.max_staleness;
    if (flag == "--synch-freq") return config.synch_freq != defaults.synch_freq;
    if (flag == "--powersgd-rank") return config.powersgd_rank != defaults.powersgd_rank;
    if (flag == "--powersgd-start-iter") {
      return config.powersgd_start_iter != defaults.powersgd_start_iter;
    }
    if (flag == "--qsgd-levels") return config.qsgd_levels != defaults.qsgd_levels;
    if (flag == "--qsgd-bucket") return config.qsgd_bucket != defaults.qsgd_bucket;
    if (flag == "--wire-dtype") return config.wire != defaults.wire;
    if (flag == "--barrier-before-communicate") return config.barrier_before_communicate;
    if (flag == "--grad-stats-every") return config.grad_stats_every > 0;
    if (flag == "--norm-study-every") return config.norm_study_every > 0;
    throw std::logic_error("set_apart_from_default: no default to compare for " +
                           std::string(flag));
  };
}

std::vector<OptionNotTaken> options_not_taken(const AlgorithmConfig& config) {
  return options_not_taken(config, set_apart_from_default(config));
}

std::vector<OptionNotTaken> options_not_taken(const AlgorithmConfig& config,
                                              const OptionGiven& given) {
  const AlgorithmRow& row = find_algorithm(config.algo);
  std::vector<OptionNotTaken> found = own_options_not_taken(rows(), row, given);
  // Dense's buckets go out during backward: there is no one exchange to wait for.
  if (row.family == Family::dense && takes_option(row, kBarrier) && config.bucket_bytes > 0 &&
      given(kBarrier)) {
    found.push_back({{std::string(kBarrier)},
                     std::string(kBarrier) + " applies to --algo " + config.algo +
                         " with --bucket-mb 0, not with buckets"});
  }
  return found;
}

AlgorithmConfig resolve(AlgorithmConfig config) {
  const AlgorithmRow& row = find_algorithm(config.algo);
  if (const std::vector<OptionNotTaken> not_taken = options_not_taken(config); !not_taken.empty()) {
    throw std::invalid_argument(not_taken.front().reason);
  }
  if (config.synch_freq != 0 && config.osgp_overlap != OsgpOverlap::one_in_flight) {
    throw std::invalid_argument("--synch-freq applies to --osgp-overlap one-in-flight");
  }
  if (row.family == Family::sparse) {
    if (config.selector.empty()) config.selector = row.selector;
    if (config.aggregation.empty()) config.aggregation = row.aggregation;
  }
  if (row.family == Family::gossip && config.topology.empty()) config.topology = row.topology;
  return config;
}

std::unique_ptr<Algorithm> make_algorithm(const AlgorithmConfig& requested,
                                          comm::Communicator& comm) {
  const AlgorithmConfig config = resolve(requested);
  return find_algorithm(config.algo).make(config, comm);
}

}  // namespace commsgd::algorithms
