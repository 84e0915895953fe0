#include <stdexcept>

#include "algorithms/algorithm.hpp"
#include "algorithms/dense.hpp"
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

}  // namespace

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = {"dense", "topk", "gtopk", "gaussiank"};
  return names;
}

AlgorithmConfig resolve(AlgorithmConfig config) {
  for (const SparseDefaults& s : kSparse) {
    if (config.algo != s.algo) continue;
    if (config.selector.empty()) config.selector = s.selector;
    if (config.aggregation.empty()) config.aggregation = s.aggregation;
    return config;
  }
  if (!config.selector.empty() || !config.aggregation.empty()) {
    throw std::invalid_argument(
        "--selector and --aggregation apply to the sparse algorithms "
        "(topk, gtopk, gaussiank), not --algo " +
        config.algo);
  }
  return config;
}

std::unique_ptr<Algorithm> make_algorithm(const AlgorithmConfig& requested,
                                          comm::Communicator& comm) {
  const AlgorithmConfig config = resolve(requested);
  if (config.algo == "dense") return std::make_unique<Dense>(comm);
  if (!config.selector.empty()) return std::make_unique<SparseSgd>(config, comm);
  throw std::invalid_argument("--algo: unknown algorithm '" + config.algo + "'");
}

}  // namespace commsgd::algorithms
