#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/gossip/topology.hpp"

namespace commsgd::algorithms {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Push-sum mixing at iteration t: column r spreads rank r's mass evenly over itself and its
// out-peers.
Matrix push_sum_mixing(const Topology& g, std::uint64_t t) {
  const int p = g.size();
  Matrix a(p, std::vector<double>(p, 0.0));
  for (int r = 0; r < p; ++r) {
    const std::vector<int> out = g.out_peers(r, t);
    const double share = 1.0 / static_cast<double>(out.size() + 1);
    a[r][r] += share;
    for (const int q : out) a[q][r] += share;
  }
  return a;
}

struct Case {
  std::string name;
  int peers_per_iter;
};

class Topologies : public ::testing::TestWithParam<Case> {};

// A property test over many (P, t): the invariants every gossip algorithm relies on.
TEST_P(Topologies, InvariantsHoldForEveryRankCountAndIteration) {
  for (int p = 2; p <= 16; ++p) {
    if (GetParam().name.starts_with("bipartite-exponential") && p % 2 != 0) {
      EXPECT_THROW(make_topology(GetParam().name, p, 1), std::invalid_argument) << p;
      continue;
    }
    const auto g = make_topology(GetParam().name, p, GetParam().peers_per_iter);
    for (std::uint64_t t = 0; t < 40; ++t) {
      for (int r = 0; r < p; ++r) {
        const std::vector<int> out = g->out_peers(r, t);
        const std::vector<int> in = g->in_peers(r, t);
        ASSERT_FALSE(out.empty()) << "P=" << p << " t=" << t << " r=" << r;
        EXPECT_EQ(std::set<int>(out.begin(), out.end()).size(), out.size()) << "duplicate peer";
        EXPECT_EQ(std::count(out.begin(), out.end(), r), 0) << "self-loop";
        for (const int q : out) {
          ASSERT_TRUE(q >= 0 && q < p);
          const std::vector<int> q_in = g->in_peers(q, t);
          EXPECT_EQ(std::count(q_in.begin(), q_in.end(), r), 1) << "in-peers miss an out-edge";
        }
        for (const int q : in) {
          const std::vector<int> q_out = g->out_peers(q, t);
          EXPECT_EQ(std::count(q_out.begin(), q_out.end(), r), 1) << "in-peer without out-edge";
        }
        if (g->symmetric()) {
          EXPECT_EQ(std::set<int>(out.begin(), out.end()), std::set<int>(in.begin(), in.end()))
              << "P=" << p << " t=" << t << " r=" << r;
        }
      }
      // Column-stochastic always (push-sum conserves mass); doubly stochastic when symmetric
      // (the uniform averaging of dpsgd keeps the mean).
      const Matrix a = push_sum_mixing(*g, t);
      for (int c = 0; c < p; ++c) {
        double column = 0, row = 0;
        for (int r = 0; r < p; ++r) {
          column += a[r][c];
          row += a[c][r];
        }
        EXPECT_NEAR(column, 1.0, 1e-12);
        if (g->symmetric()) {
          EXPECT_NEAR(row, 1.0, 1e-12) << "P=" << p << " t=" << t;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, Topologies,
    ::testing::Values(Case{"exponential", 1}, Case{"exponential", 2}, Case{"exponential", 5},
                      Case{"exponential-two-sided", 1}, Case{"exponential-two-sided", 3},
                      Case{"exponential-two-sided-distinct", 1},
                      Case{"exponential-two-sided-distinct", 3}, Case{"bipartite-exponential", 1},
                      Case{"bipartite-exponential-two-sided", 1},
                      Case{"bipartite-exponential-pairs", 1}, Case{"ring", 1}, Case{"complete", 1}),
    [](const auto& info) {
      std::string name = info.param.name + "_" + std::to_string(info.param.peers_per_iter);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(TopologyTest, ExponentialCyclesThroughPowersOfTwo) {
  const auto g = make_topology("exponential", 8, 1);  // m = ⌊log2 7⌋ = 2: offsets 1, 2, 4
  EXPECT_EQ(g->out_peers(5, 0), std::vector<int>{6});
  EXPECT_EQ(g->out_peers(5, 1), std::vector<int>{7});
  EXPECT_EQ(g->out_peers(5, 2), std::vector<int>{1});
  EXPECT_EQ(g->out_peers(5, 3), std::vector<int>{6});
  const auto two = make_topology("exponential", 8, 2);
  EXPECT_EQ(two->out_peers(0, 2), (std::vector<int>{4, 1}));
  // P = 3: offsets 1, 2; asking for 5 peers gives the two distinct ones.
  EXPECT_EQ(make_topology("exponential", 3, 5)->out_peers(0, 0), (std::vector<int>{1, 2}));
}

// A directed shift at P ranks, one peer a round: at round t rank r sends to r + offsets[t mod L]
// and hears from r − offsets[t mod L], L = offsets.size(); over two cycles.
void expect_shifts(const std::string& name, const std::vector<int>& offsets, int p = 8) {
  const auto g = make_topology(name, p, 1);
  for (std::uint64_t t = 0; t < 2 * offsets.size(); ++t) {
    const int offset = offsets[t % offsets.size()];
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(g->out_peers(r, t), std::vector<int>{(r + offset + p) % p}) << r << " " << t;
      EXPECT_EQ(g->in_peers(r, t), std::vector<int>{(r - offset + p) % p}) << r << " " << t;
    }
  }
  EXPECT_FALSE(g->symmetric());
}

// The SGP code's graph_type 0 as its job scripts run it (graph_manager.py,
// DynamicDirectedExponentialGraph; gossiper.py rotates the phone book by peers_per_itr after
// every gossip): offsets +1, −1, +2, −2, +4, −4 at P = 8, one a round, the in-peer r − offset.
TEST(TopologyTest, ExponentialTwoSidedIsSgpGraphZero) {
  expect_shifts("exponential-two-sided", {1, -1, 2, -2, 4, -4});
  // Two a round: round t takes positions 2t and 2t + 1 of the list.
  const auto two = make_topology("exponential-two-sided", 8, 2);
  EXPECT_EQ(two->out_peers(0, 1), (std::vector<int>{2, 6}));
  EXPECT_EQ(two->out_peers(0, 3), (std::vector<int>{1, 7}));
  // P = 4: +2 and −2 are one peer, sent to once.
  EXPECT_EQ(make_topology("exponential-two-sided", 4, 2)->out_peers(0, 1), std::vector<int>{2});
}

// graph_type 0 at the sgp_pytorch0.5 tag, which produced the paper's runs (graph_manager.py:102-113
// there): a peer already in the phone book is not added again, so for P = 2^k the pair +2^m, −2^m
// (m = ⌊log2(P−1)⌋ = k − 1) is one entry and the cycle has 2m + 1 entries where HEAD's has
// 2m + 2 (exponential-two-sided visits the peer at distance P/2 twice a cycle).
TEST(TopologyTest, ExponentialTwoSidedDistinctIsTheTagsGraphZero) {
  expect_shifts("exponential-two-sided-distinct", {1, -1, 2}, 4);
  expect_shifts("exponential-two-sided-distinct", {1, -1, 2, -2, 4}, 8);
  expect_shifts("exponential-two-sided-distinct", {1, -1, 2, -2, 4, -4, 8}, 16);
  expect_shifts("exponential-two-sided", {1, -1, 2, -2}, 4);
  expect_shifts("exponential-two-sided", {1, -1, 2, -2, 4, -4, 8, -8}, 16);
  // P = 6 drops +4 and −4, which are −2 and +2.
  expect_shifts("exponential-two-sided-distinct", {1, -1, 2, -2}, 6);
  // Two a round still take consecutive entries of the shorter list: at P = 8, round 2 takes
  // entries 4 and 0 (+4, +1).
  EXPECT_EQ(make_topology("exponential-two-sided-distinct", 8, 2)->out_peers(0, 2),
            (std::vector<int>{4, 1}));
}

// graph_type 1 at the sgp_pytorch0.5 tag (graph_manager.py:124-159 there; gossiper.py PushPull
// takes entry t of every rank's list): an active (odd) rank lists r + o, r − o and a passive
// (even) rank r − o, r + o, each peer once, so active r and passive r + a_t name each other at
// every round: symmetric pairs whose direction alternates. The active ranks' cycle is +1, −1 at
// P = 4 (+3 and −3 are −1 and +1), +1, −1, +3, −3 at P = 8, and +1, −1, +3, −3, +5, −5, +9, −9
// at P = 16.
TEST(TopologyTest, BipartiteExponentialPairsIsTheTagsSymmetricGraphOne) {
  const std::vector<std::pair<int, std::vector<int>>> cycles = {
      {4, {1, -1}}, {8, {1, -1, 3, -3}}, {16, {1, -1, 3, -3, 5, -5, 9, -9}}};
  for (const auto& [p, offsets] : cycles) {
    const auto g = make_topology("bipartite-exponential-pairs", p, 1);
    EXPECT_TRUE(g->symmetric());
    for (std::uint64_t t = 0; t < 2 * offsets.size(); ++t) {
      const int offset = offsets[t % offsets.size()];
      for (int r = 1; r < p; r += 2) {
        const int partner = (r + offset + p) % p;
        EXPECT_EQ(g->out_peers(r, t), std::vector<int>{partner}) << p << " " << r << " " << t;
        EXPECT_EQ(g->out_peers(partner, t), std::vector<int>{r}) << p << " " << r << " " << t;
        EXPECT_EQ(g->in_peers(r, t), std::vector<int>{partner}) << p << " " << r << " " << t;
      }
    }
  }
  EXPECT_THROW(make_topology("bipartite-exponential-pairs", 6 + 1, 1), std::invalid_argument);
}

// The SGP code's graph_type 1 as its D-PSGD scripts run it (graph_manager.py,
// DynamicBipartiteExponentialGraph): offsets +1, −1, +3, −3, +5, −5 at P = 8, one a round; odd
// ranks hear only from even ones and the other way round, but r's in-peer is not its out-peer.
TEST(TopologyTest, BipartiteExponentialTwoSidedIsSgpGraphOne) {
  expect_shifts("bipartite-exponential-two-sided", {1, -1, 3, -3, 5, -5});
  EXPECT_THROW(make_topology("bipartite-exponential-two-sided", 5, 1), std::invalid_argument);
}

TEST(TopologyTest, BipartitePairsActiveOddWithPassiveEven) {
  for (const int p : {2, 4, 6, 8, 12, 16}) {
    const auto g = make_topology("bipartite-exponential", p, 1);
    for (std::uint64_t t = 0; t < 20; ++t) {
      for (int r = 0; r < p; ++r) {
        const std::vector<int> out = g->out_peers(r, t);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_NE(out[0] % 2, r % 2) << "pairs cross the bipartition";
        EXPECT_EQ(g->out_peers(out[0], t), std::vector<int>{r}) << "pairs are symmetric";
      }
    }
  }
  try {
    make_topology("bipartite-exponential", 5, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("even number of workers (got 5)"), std::string::npos);
  }
}

TEST(TopologyTest, RejectsBadArguments) {
  EXPECT_THROW(make_topology("ring", 1, 1), std::invalid_argument);
  EXPECT_THROW(make_topology("exponential", 4, 0), std::invalid_argument);
  EXPECT_THROW(make_topology("torus", 4, 1), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::algorithms
