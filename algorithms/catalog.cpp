#include "algorithms/catalog.hpp"

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

ExtensionTable<AlgorithmRow>& rows() {
  static ExtensionTable<AlgorithmRow> table(
      "--algo", "algorithm",
      {
          {.name = "dense",
           .family = Family::dense,
           .summary =
               "allreduce of the whole gradient in buckets, overlapped with backward (S-SGD)",
           .traffic = Traffic::bucketed_allreduce,
           .overlap = Overlap::with_backward,
           .make = make_dense},
          {.name = "topk",
           .family = Family::sparse,
           .summary = "allgather of each worker's k largest accumulated gradient entries",
           .selector = "exact",
           .aggregation = "allgather",
           .traffic = Traffic::of_aggregation,
           .make = make_sparse},
          {.name = "gtopk",
           .family = Family::sparse,
           .summary = "global top-k by recursive doubling: log2(P) exchanges of k entries",
           .selector = "exact",
           .aggregation = "gtopk",
           .traffic = Traffic::of_aggregation,
           .make = make_sparse},
          {.name = "gaussiank",
           .family = Family::sparse,
           .summary = "like topk, the entries picked by a Gaussian threshold",
           .selector = "gaussian",
           .aggregation = "allgather",
           .traffic = Traffic::of_aggregation,
           .make = make_sparse},
          {.name = "signsgd",
           .family = Family::compressed,
           .summary = "one bit a gradient entry, its sign; the update is the ranks' majority vote",
           .traffic = Traffic::allgathered_signs,
           .make = make_signsgd},
          {.name = "ef-signsgd",
           .family = Family::compressed,
           .summary = "signs scaled by each tensor's mean |entry|, with error feedback",
           .traffic = Traffic::allgathered_signs,
           .make = make_ef_signsgd},
          {.name = "qsgd",
           .family = Family::compressed,
           .summary =
               "each entry stochastically rounded to s levels of its bucket's norm, unbiased",
           .takes_levels = true,
           .traffic = Traffic::allgathered_levels,
           .make = make_qsgd},
          {.name = "powersgd",
           .family = Family::compressed,
           .summary = "each weight matrix as rank-r factors P, Q, two allreduces; error feedback",
           .takes_low_rank = true,
           .traffic = Traffic::allreduced_factors,
           .make = make_powersgd},
          {.name = "sgp",
           .family = Family::gossip,
           .summary = "push-sum: a share of (params, weight) to out-peers of a directed graph",
           .topology = "exponential",
           .rounds_block_training = true,
           .traffic = Traffic::push_to_peers,
           .make = make_sgp},
          {.name = "osgp",
           .family = Family::gossip,
           .summary = "sgp with the exchange on a communication thread (bounded staleness)",
           .topology = "exponential",
           .takes_overlap = true,
           .traffic = Traffic::push_to_peers,
           .overlap = Overlap::with_step,
           .make = make_osgp},
          {.name = "dpsgd",
           .family = Family::gossip,
           .summary = "neighbour averaging of the parameters every iteration",
           .topology = "bipartite-exponential",
           .takes_directed_mixing = true,
           .rounds_block_training = true,
           .traffic = Traffic::neighbour_average,
           .make = make_dpsgd},
          {.name = "adpsgd",
           .family = Family::gossip,
           .summary = "asynchronous pairwise averaging on a gossip thread",
           .topology = "bipartite-exponential",
           .takes_directed_mixing = true,
           .traffic = Traffic::pairwise_average,
           .overlap = Overlap::with_step,
           .make = make_adpsgd},
      });
  return table;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// "--algo a, --algo b": the rows that take an option only some rows take.
std::string rows_taking(bool AlgorithmRow::*takes) {
  std::string which;
  for (const AlgorithmRow& row : rows()) {
    if (row.*takes) which += (which.empty() ? "--algo " : ", --algo ") + std::string(row.name);
  }
  return which;
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
  for (const AlgorithmRow& row : rows()) {
    if (row.family == Family::dense) return row.name;
  }
  throw std::logic_error("the algorithm table has no dense row");
}

Traffic traffic_of(const AlgorithmRow& row, std::string_view aggregation) {
  if (row.traffic != Traffic::of_aggregation) return row.traffic;
  return aggregation_table().find(aggregation.empty() ? row.aggregation : aggregation).traffic;
}

std::vector<OptionNotTaken> options_not_taken(const AlgorithmConfig& config) {
  const AlgorithmRow& row = find_algorithm(config.algo);
  std::vector<OptionNotTaken> found;
  // `option` (the options as the reason names them) applies to `which`, not to this row; `flags`
  // are those of them the config sets.
  const auto refuse = [&](std::vector<std::string> flags, const std::string& option,
                          const std::string& which) {
    const bool several = option.find(" and ") != std::string::npos;
    found.push_back({std::move(flags), option + (several ? " apply to " : " applies to ") + which +
                                           ", not --algo " + config.algo});
  };
  // "the sparse algorithms (topk, gtopk, gaussiank)", or "--algo dense" for a family of one.
  const auto family_text = [](Family family) {
    const std::vector<std::string> names = algorithm_names(family);
    return names.size() == 1
               ? "--algo " + names[0]
               : "the " + std::string(family_name(family)) + " algorithms (" + joined(names) + ")";
  };
  // Of the flags given, those whose option the config sets.
  const auto those_set = [](std::initializer_list<std::pair<const char*, bool>> flags) {
    std::vector<std::string> given;
    for (const auto& [flag, is_set] : flags) {
      if (is_set) given.emplace_back(flag);
    }
    return given;
  };

  if (row.family != Family::sparse && (!config.selector.empty() || !config.aggregation.empty())) {
    refuse(those_set({{"--selector", !config.selector.empty()},
                      {"--aggregation", !config.aggregation.empty()}}),
           "--selector and --aggregation", family_text(Family::sparse));
  }
  if (row.family != Family::gossip && !config.topology.empty()) {
    refuse({"--topology"}, "--topology", family_text(Family::gossip));
  }
  const bool one_in_flight = config.osgp_overlap == OsgpOverlap::one_in_flight;
  if (config.mixing == GossipMixing::directed && !row.takes_directed_mixing) {
    refuse({"--gossip-mixing"}, "--gossip-mixing directed",
           rows_taking(&AlgorithmRow::takes_directed_mixing));
  }
  if ((one_in_flight || config.synch_freq != 0) && !row.takes_overlap) {
    refuse(those_set({{"--osgp-overlap", one_in_flight}, {"--synch-freq", config.synch_freq != 0}}),
           "--osgp-overlap one-in-flight and --synch-freq",
           rows_taking(&AlgorithmRow::takes_overlap));
  }
  const AlgorithmConfig defaults;
  if ((config.powersgd_rank != defaults.powersgd_rank ||
       config.powersgd_start_iter != defaults.powersgd_start_iter) &&
      !row.takes_low_rank) {
    refuse(those_set({{"--powersgd-rank", config.powersgd_rank != defaults.powersgd_rank},
                      {"--powersgd-start-iter",
                       config.powersgd_start_iter != defaults.powersgd_start_iter}}),
           "--powersgd-rank and --powersgd-start-iter", rows_taking(&AlgorithmRow::takes_low_rank));
  }
  if ((config.qsgd_levels != defaults.qsgd_levels || config.qsgd_bucket != defaults.qsgd_bucket) &&
      !row.takes_levels) {
    refuse(those_set({{"--qsgd-levels", config.qsgd_levels != defaults.qsgd_levels},
                      {"--qsgd-bucket", config.qsgd_bucket != defaults.qsgd_bucket}}),
           "--qsgd-levels and --qsgd-bucket", rows_taking(&AlgorithmRow::takes_levels));
  }
  if (row.family != Family::dense && config.wire != comm::DataType::f32) {
    refuse({"--wire-dtype"}, "--wire-dtype", family_text(Family::dense));
  }
  const bool dense_in_one_piece = row.family == Family::dense && config.bucket_bytes == 0;
  const bool exchange_after_backward =
      row.family == Family::sparse || row.family == Family::compressed || dense_in_one_piece;
  if (config.barrier_before_communicate && !exchange_after_backward && !row.rounds_block_training) {
    std::string blocking;
    for (const AlgorithmRow& r : algorithm_table()) {
      if (r.rounds_block_training) blocking += std::string(", ") + std::string(r.name);
    }
    found.push_back(
        {{"--barrier-before-communicate"},
         "--barrier-before-communicate applies to the sparse and compressed algorithms, "
         "dense with --bucket-mb 0" +
             blocking + "; not --algo " + config.algo +
             (row.family == Family::dense ? " with buckets" : "")});
  }
  for (const auto& [flag, every] : {std::pair{"--grad-stats-every", config.grad_stats_every},
                                    std::pair{"--norm-study-every", config.norm_study_every}}) {
    if (every > 0 && row.family != Family::sparse) {
      refuse({flag}, flag, family_text(Family::sparse));
    }
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
