#include "algorithms/gossip/topology.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace commsgd::algorithms {
namespace {

// Time-varying directed exponential graph (Assran et al.): at iteration t rank r sends to
// r + 2^(t mod (m+1)), m = ⌊log2(P−1)⌋; with n peers per iteration, to the next n offsets of
// that list. Offsets that coincide modulo P are sent to once.
class Exponential final : public Topology {
 public:
  Exponential(int size, int peers_per_iter) : Topology(size), peers_(peers_per_iter) {
    for (int offset = 1; offset <= size - 1; offset *= 2) offsets_.push_back(offset);
  }
  std::vector<int> out_peers(int rank, std::uint64_t t) const override {
    std::vector<int> peers;
    const std::size_t count = offsets_.size();
    for (int j = 0; j < peers_; ++j) {
      const int offset = offsets_[(t + static_cast<std::uint64_t>(j)) % count];
      const int peer = (rank + offset) % size();
      if (std::find(peers.begin(), peers.end(), peer) == peers.end()) peers.push_back(peer);
    }
    return peers;
  }
  bool symmetric() const override { return size() == 2; }

 private:
  int peers_;
  std::vector<int> offsets_;  // 1, 2, 4, ..., 2^m
};

// +o, −o modulo P for each offset o of `forward` in turn: the peer lists of the SGP code's graphs
// (graph_manager.py). With `distinct`, an offset already listed is dropped, as the sgp_pytorch0.5
// tag's phone book does (graph_manager.py:102-113): for P = 2^m, +2^m and −2^m are one peer,
// listed once. HEAD's duplicate check never matches, so it keeps both.
std::vector<int> both_ways(const std::vector<int>& forward, int size, bool distinct) {
  std::vector<int> offsets;
  for (const int offset : forward) {
    for (const int o : {offset % size, (size - offset % size) % size}) {
      if (!distinct || std::find(offsets.begin(), offsets.end(), o) == offsets.end()) {
        offsets.push_back(o);
      }
    }
  }
  return offsets;
}

// 1, 2, 4, ..., 2^m and 1, 3, 5, 9, ..., 1 + 2^m, m = ⌊log2(P−1)⌋: graph_type 0's offsets and
// graph_type 1's (odd, so that odd ranks talk only to even ones).
std::vector<int> powers_of_two(int size) {
  std::vector<int> offsets;
  for (int power = 1; power <= size - 1; power *= 2) offsets.push_back(power);
  return offsets;
}
std::vector<int> one_plus_powers_of_two(int size) {
  std::vector<int> offsets = powers_of_two(size);
  for (std::size_t i = 1; i < offsets.size(); ++i) ++offsets[i];
  return offsets;
}

void require_even_workers(int size, const std::string& topology) {
  if (size % 2 != 0) {
    throw std::invalid_argument("--topology " + topology +
                                " needs an even number of workers (got " + std::to_string(size) +
                                ")");
  }
}

// The SGP code's graph_type 0 (graph_manager.py, DynamicDirectedExponentialGraph): the offsets of
// both_ways(powers_of_two) taken n = peers_per_iter at a time in turn: at iteration t rank r sends
// to r + o for the offsets o at positions (t·n + j) mod L, j < n, L the list's length (2(m+1) at
// HEAD; 2m+1 at the tag for P = 2^m). The paper's graph (Exponential above) has the forward
// offsets alone.
class ExponentialTwoSided final : public Topology {
 public:
  ExponentialTwoSided(int size, int peers_per_iter, bool distinct)
      : Topology(size),
        peers_(peers_per_iter),
        offsets_(both_ways(powers_of_two(size), size, distinct)) {}
  std::vector<int> out_peers(int rank, std::uint64_t t) const override {
    std::vector<int> peers;
    const std::size_t count = offsets_.size();
    const auto n = static_cast<std::uint64_t>(peers_);
    for (std::uint64_t j = 0; j < n; ++j) {
      const int peer = (rank + offsets_[(t * n + j) % count]) % size();
      if (std::find(peers.begin(), peers.end(), peer) == peers.end()) peers.push_back(peer);
    }
    return peers;
  }
  bool symmetric() const override { return size() == 2; }

 private:
  int peers_;
  std::vector<int> offsets_;
};

// Active-passive pairs on a bipartite graph: odd ranks are active, even ranks passive; at
// iteration t active rank r pairs with r + o_t and passive rank r with r − o_t, o_t cycling
// through `offsets`. Every offset is odd, so each iteration is a perfect matching between the two
// halves: the pairs are symmetric. Lian et al. 2018's bipartite exponential graph takes the
// offsets 1, 3, 5, 9, 17, ... (1 + 2^i); the SGP code's graph_type 1 at its sgp_pytorch0.5 tag
// (graph_manager.py:124-159), which produced the paper's D-PSGD runs, takes +1, −1, +3, −3, ...
// each peer once: an odd rank lists r + o, r − o, an even one r − o, r + o, so the two name each
// other in every round, where HEAD shifts every rank one way (BipartiteExponentialTwoSided).
// Even P; `name` is the --topology value, for the error.
class BipartitePairs final : public Topology {
 public:
  BipartitePairs(int size, std::vector<int> offsets, const std::string& name)
      : Topology(size), offsets_(std::move(offsets)) {
    require_even_workers(size, name);
  }
  std::vector<int> out_peers(int rank, std::uint64_t t) const override {
    const int offset = offsets_[t % offsets_.size()];
    const int peer =
        rank % 2 == 1 ? (rank + offset) % size() : (rank - offset % size() + size()) % size();
    return {peer};
  }
  bool symmetric() const override { return true; }

 private:
  std::vector<int> offsets_;
};

// The SGP code's graph_type 1 as its D-PSGD job scripts run it (graph_manager.py,
// DynamicBipartiteExponentialGraph at e682064): the offsets +1, −1, +3, −3, +5, −5, +9, −9, ...,
// ±(1 + 2^i) for i up to m = ⌊log2(P−1)⌋, one a round in turn: rank r sends to r + o and hears
// from r − o. Every offset is odd, so odd ranks talk only to even ones, but the pairs are not
// symmetric: this is a directed shift (the symmetric pairs are BipartitePairs). Even P.
class BipartiteExponentialTwoSided final : public Topology {
 public:
  explicit BipartiteExponentialTwoSided(int size)
      : Topology(size), offsets_(both_ways(one_plus_powers_of_two(size), size, false)) {
    require_even_workers(size, "bipartite-exponential-two-sided");
  }
  std::vector<int> out_peers(int rank, std::uint64_t t) const override {
    return {(rank + offsets_[t % offsets_.size()]) % size()};
  }
  bool symmetric() const override { return size() == 2; }

 private:
  std::vector<int> offsets_;  // 1, P−1, 3, P−3, 5, P−5, ... (modulo P)
};

class Ring final : public Topology {
 public:
  using Topology::Topology;
  std::vector<int> out_peers(int rank, std::uint64_t) const override {
    const int next = (rank + 1) % size(), previous = (rank + size() - 1) % size();
    if (next == previous) return {next};
    return {previous, next};
  }
  bool symmetric() const override { return true; }
};

class Complete final : public Topology {
 public:
  using Topology::Topology;
  std::vector<int> out_peers(int rank, std::uint64_t) const override {
    std::vector<int> peers;
    for (int q = 0; q < size(); ++q) {
      if (q != rank) peers.push_back(q);
    }
    return peers;
  }
  bool symmetric() const override { return true; }
};

}  // namespace

std::vector<int> Topology::in_peers(int rank, std::uint64_t t) const {
  std::vector<int> peers;
  for (int q = 0; q < size_; ++q) {
    const std::vector<int> out = out_peers(q, t);
    if (std::find(out.begin(), out.end(), rank) != out.end()) peers.push_back(q);
  }
  return peers;
}

ExtensionTable<TopologyRow>& topology_table() {
  static ExtensionTable<TopologyRow> table(
      "--topology", "topology",
      {
          {"exponential", "r sends to r + 2^i, i cycling with t (SGP's paper)",
           [](int size, int peers) -> std::unique_ptr<Topology> {
             return std::make_unique<Exponential>(size, peers);
           }},
          {"exponential-two-sided",
           "r sends to r + 1, r - 1, r + 2, r - 2, ..., r ± 2^i in turn (the SGP code's graph_type "
           "0 "
           "at HEAD: a peer named twice is visited twice)",
           [](int size, int peers) -> std::unique_ptr<Topology> {
             return std::make_unique<ExponentialTwoSided>(size, peers, false);
           }},
          {"exponential-two-sided-distinct",
           "as exponential-two-sided, each peer once (the SGP code's graph_type 0 at its "
           "sgp_pytorch0.5 tag, the paper's runs: 2*log2(P) - 1 offsets for P a power of two)",
           [](int size, int peers) -> std::unique_ptr<Topology> {
             return std::make_unique<ExponentialTwoSided>(size, peers, true);
           }},
          {"bipartite-exponential",
           "odd ranks pair with r + 1, r + 3, r + 5, r + 9, ... in turn; symmetric, even P",
           [](int size, int) -> std::unique_ptr<Topology> {
             return std::make_unique<BipartitePairs>(size, one_plus_powers_of_two(size),
                                                     "bipartite-exponential");
           }},
          {"bipartite-exponential-two-sided",
           "r sends to r + 1, r - 1, r + 3, r - 3, r + 5, ... in turn (the SGP code's graph_type "
           "1, "
           "its D-PSGD's at HEAD; directed), even P",
           [](int size, int) -> std::unique_ptr<Topology> {
             return std::make_unique<BipartiteExponentialTwoSided>(size);
           }},
          {"bipartite-exponential-pairs",
           "odd ranks pair with r + 1, r - 1, r + 3, r - 3, r + 5, ... in turn, each peer once "
           "(the "
           "SGP code's graph_type 1 at its sgp_pytorch0.5 tag, the paper's D-PSGD); "
           "symmetric, even P",
           [](int size, int) -> std::unique_ptr<Topology> {
             return std::make_unique<BipartitePairs>(
                 size, both_ways(one_plus_powers_of_two(size), size, true),
                 "bipartite-exponential-pairs");
           }},
          {"ring", "r with r - 1 and r + 1; static, symmetric",
           [](int size, int) -> std::unique_ptr<Topology> { return std::make_unique<Ring>(size); }},
          {"complete", "every rank with every other; static, symmetric (for tests)",
           [](int size, int) -> std::unique_ptr<Topology> {
             return std::make_unique<Complete>(size);
           }},
      });
  return table;
}

std::unique_ptr<Topology> make_topology(const std::string& name, int size, int peers_per_iter) {
  if (size < 2) throw std::invalid_argument("the gossip algorithms need at least 2 workers");
  if (peers_per_iter < 1) throw std::invalid_argument("--peers-per-iter must be at least 1");
  return topology_table().find(name).make(size, peers_per_iter);
}

}  // namespace commsgd::algorithms
