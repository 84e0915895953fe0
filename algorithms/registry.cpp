#include <stdexcept>

#include "algorithms/algorithm.hpp"
#include "algorithms/dense.hpp"
#include "algorithms/gossip/adpsgd.hpp"
#include "algorithms/gossip/dpsgd.hpp"
#include "algorithms/gossip/osgp.hpp"
#include "algorithms/gossip/sgp.hpp"
#include "algorithms/sparse/sparse_sgd.hpp"

namespace commsgd::algorithms {
namespace {

// The sparse algorithms are named selector × aggregation pairs (DESIGN.md).
struct SparseDefaults {
  const char* algo;
  const char* selector;
  const char* aggregation;
};
constexpr SparseDefaults kSparse[] = {
    {"topk", "exact", "allgather"},
    {"gtopk", "exact", "gtopk"},
    {"gaussiank", "gaussian", "allgather"},
};

struct GossipDefaults {
  const char* algo;
  const char* topology;
};
constexpr GossipDefaults kGossip[] = {
    {"sgp", "exponential"},
    {"osgp", "exponential"},
    {"dpsgd", "bipartite-exponential"},
    {"adpsgd", "bipartite-exponential"},
};

}  // namespace

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = {"dense", "topk", "gtopk", "gaussiank",
                                                 "sgp",   "osgp", "dpsgd", "adpsgd"};
  return names;
}

AlgorithmConfig resolve(AlgorithmConfig config) {
  bool sparse = false, gossip = false;
  for (const SparseDefaults& s : kSparse) {
    if (config.algo != s.algo) continue;
    sparse = true;
    if (config.selector.empty()) config.selector = s.selector;
    if (config.aggregation.empty()) config.aggregation = s.aggregation;
  }
  for (const GossipDefaults& g : kGossip) {
    if (config.algo != g.algo) continue;
    gossip = true;
    if (config.topology.empty()) config.topology = g.topology;
  }
  if (!sparse && (!config.selector.empty() || !config.aggregation.empty())) {
    throw std::invalid_argument(
        "--selector and --aggregation apply to the sparse algorithms "
        "(topk, gtopk, gaussiank), not --algo " +
        config.algo);
  }
  if (config.algo != "dense" && config.wire != comm::DataType::f32) {
    throw std::invalid_argument("--wire-dtype applies to --algo dense, not --algo " + config.algo);
  }
  if (config.barrier_before_communicate && !sparse &&
      !(config.algo == "dense" && config.bucket_bytes == 0)) {
    throw std::invalid_argument(
        "--barrier-before-communicate applies to the sparse algorithms and to dense with "
        "--bucket-mb 0, not --algo " +
        config.algo + (config.algo == "dense" ? " with buckets" : ""));
  }
  if (!gossip && !config.topology.empty()) {
    throw std::invalid_argument(
        "--topology applies to the gossip algorithms (sgp, osgp, "
        "dpsgd), not --algo " +
        config.algo);
  }
  return config;
}

std::unique_ptr<Algorithm> make_algorithm(const AlgorithmConfig& requested,
                                          comm::Communicator& comm) {
  const AlgorithmConfig c = resolve(requested);
  if (c.algo == "dense") return std::make_unique<Dense>(comm, c);
  if (!c.selector.empty()) return std::make_unique<SparseSgd>(c, comm);
  if (!c.topology.empty()) {
    auto topology = make_topology(c.topology, comm.size(), c.peers_per_iter);
    if (c.algo == "sgp") return std::make_unique<Sgp>(comm, std::move(topology));
    if (c.algo == "osgp") {
      return std::make_unique<Osgp>(comm, std::move(topology), c.max_staleness,
                                    c.comm_timeout_seconds);
    }
    if (c.algo == "adpsgd") {
      return std::make_unique<Adpsgd>(comm, std::move(topology), c.comm_timeout_seconds);
    }
    return std::make_unique<Dpsgd>(comm, std::move(topology));
  }
  throw std::invalid_argument("--algo: unknown algorithm '" + c.algo + "'");
}

}  // namespace commsgd::algorithms
