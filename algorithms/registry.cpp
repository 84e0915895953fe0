#include <stdexcept>

#include "algorithms/algorithm.hpp"
#include "algorithms/dense.hpp"

namespace commsgd::algorithms {

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = {"dense"};
  return names;
}

std::unique_ptr<Algorithm> make_algorithm(const AlgorithmConfig& config, comm::Communicator& comm) {
  if (config.algo == "dense") return std::make_unique<Dense>(comm);
  throw std::invalid_argument("--algo: unknown algorithm '" + config.algo + "'");
}

}  // namespace commsgd::algorithms
