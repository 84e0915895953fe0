#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/extension_table.hpp"

namespace commsgd::algorithms {

// Who talks to whom at iteration t, for the gossip algorithms (docs/design.md, "Gossip family").
// A topology names each rank's out-peers; in-peers follow from them, so the two lists can never
// disagree. Peers are distinct and never the rank itself.
class Topology {
 public:
  explicit Topology(int size) : size_(size) {}
  virtual ~Topology() = default;

  int size() const { return size_; }
  virtual std::vector<int> out_peers(int rank, std::uint64_t t) const = 0;
  // Whether out-peers are also in-peers for every rank and t (what dpsgd's mixing needs).
  virtual bool symmetric() const = 0;
  // The ranks r with `rank` among out_peers(r, t), ascending.
  std::vector<int> in_peers(int rank, std::uint64_t t) const;

 private:
  int size_;
};

// One row per --topology value: its name, one line for --help, and its factory (given the
// worker count and --peers-per-iter).
struct TopologyRow {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Topology> (*make)(int size, int peers_per_iter);
};
ExtensionTable<TopologyRow>& topology_table();

// Throws std::invalid_argument with a one-line reason when the topology cannot exist for this
// many ranks (bipartite-exponential with an odd count, fewer than 2 ranks).
std::unique_ptr<Topology> make_topology(const std::string& name, int size, int peers_per_iter);

}  // namespace commsgd::algorithms
