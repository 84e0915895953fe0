// Multi-rank tests of the gossip family under mpirun (P = 2..8): pure averaging reaches the true
// mean, push-sum weights are conserved, and push-sum de-biases exactly on a non-regular graph.
// Every rank runs every test; no check skips a collective.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/gossip/adpsgd.hpp"
#include "algorithms/gossip/consensus.hpp"
#include "algorithms/gossip/dpsgd.hpp"
#include "algorithms/gossip/osgp.hpp"
#include "algorithms/gossip/sgp.hpp"

namespace commsgd::algorithms {
namespace {

constexpr std::size_t kD = 1000;

std::vector<float> random_model(int rank) {
  std::mt19937 rng(77 + static_cast<unsigned>(rank));
  std::normal_distribution<float> normal(static_cast<float>(rank), 1.0f);
  std::vector<float> x(kD);
  for (float& v : x) v = normal(rng);
  return x;
}

// The mean over ranks of every rank's initial model, in double.
std::vector<double> true_mean(comm::Communicator& comm) {
  const std::vector<float> mine = random_model(comm.rank());
  std::vector<double> mean(mine.begin(), mine.end());
  comm.allreduce(std::span(mean), comm::ReduceOp::sum);
  for (double& m : mean) m /= comm.size();
  return mean;
}

double max_relative_error(std::span<const float> value, const std::vector<double>& expected) {
  double worst = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    worst = std::max(worst, std::abs(value[i] - expected[i]) / (1.0 + std::abs(expected[i])));
  }
  return worst;
}

// lr = 0: the optimizer leaves the parameters alone, so after_step is pure mixing. Checks the
// consensus distance against the one of the ranks' initial models.
double consensus_after(Algorithm& algorithm, std::vector<float>& params, int iterations,
                       const std::vector<double>& mean, comm::Communicator& comm) {
  ConsensusAverage initial;
  initial.compute(random_model(comm.rank()), comm);
  const double start = initial.distance();
  EXPECT_GT(start, 0.5);
  for (int t = 0; t < iterations; ++t) algorithm.after_step(params);
  const std::span<const float> average = algorithm.model_for_evaluation(params);
  EXPECT_LT(max_relative_error(average, mean), 1e-5) << "consensus value is the initial mean";
  const double end = *algorithm.consensus_distance();
  EXPECT_LT(end, 1e-6 * start) << "start " << start << " end " << end;
  double agree = end;  // every rank must reach the same verdict
  comm.allreduce(std::span(&agree, 1), comm::ReduceOp::max);
  EXPECT_EQ(agree, end);
  return end;
}

std::string symmetric_topology(int size) {
  return size % 2 == 0 ? "bipartite-exponential" : "ring";
}

TEST(GossipMpi, SgpAveragesToTheMeanAndConservesWeight) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  std::vector<float> params = random_model(comm.rank());
  Sgp sgp(comm, make_topology("exponential", comm.size(), 1));
  for (int t = 0; t < 60; ++t) {
    sgp.after_step(params);
    double total = sgp.weight();
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    ASSERT_NEAR(total, comm.size(), 1e-5 * comm.size()) << "Σ w after step " << t;
  }
  consensus_after(sgp, params, 60, mean, comm);
}

TEST(GossipMpi, OsgpAveragesToTheMeanAndConservesWeightOnceFlushed) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  std::vector<float> params = random_model(comm.rank());
  for (const int staleness : {0, 1, 3}) {
    Osgp osgp(comm, make_topology("exponential", comm.size(), 1), Osgp::Overlap::bounded_staleness,
              staleness, 60);
    std::vector<float> model = params;
    // Staleness slows mixing: more rounds until the ranks agree to float precision.
    consensus_after(osgp, model, 400, mean, comm);
    double total = osgp.flushed_weight();
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    EXPECT_NEAR(total, comm.size(), 1e-5 * comm.size()) << "staleness " << staleness;
  }
}

// --osgp-overlap one-in-flight (the SGP code's overlap): a rank never has two exchanges started
// and unabsorbed at once, whatever --synch-freq; ranks that started different numbers of rounds
// catch up when the consensus is taken, so nothing hangs; no weight is lost; the models agree.
TEST(GossipMpi, OsgpOneInFlightNeverHasTwoExchangesOutstanding) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  for (const int synch_freq : {0, 2, 5}) {
    Osgp osgp(comm, make_topology("exponential-two-sided", comm.size(), 1),
              Osgp::Overlap::one_in_flight, synch_freq, 60);
    std::vector<float> model = random_model(comm.rank());
    consensus_after(osgp, model, 600, mean, comm);
    EXPECT_EQ(osgp.most_in_flight(), 1u) << "synch_freq " << synch_freq;
    double total = osgp.flushed_weight();
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    EXPECT_NEAR(total, comm.size(), 1e-5 * comm.size()) << "synch_freq " << synch_freq;
  }
  // Bounded staleness τ starts one every step: up to τ + 1 of them may be unfinished.
  Osgp bounded(comm, make_topology("exponential", comm.size(), 1), Osgp::Overlap::bounded_staleness,
               3, 60);
  std::vector<float> model = random_model(comm.rank());
  for (int t = 0; t < 50; ++t) bounded.after_step(model);
  EXPECT_GE(bounded.most_in_flight(), 1u);
  EXPECT_LE(bounded.most_in_flight(), 4u);
}

// `steps` mixing steps (lr = 0), after each of which the mean over ranks is still `mean`.
void expect_mean_kept(Algorithm& algorithm, std::vector<float>& params, int steps,
                      const std::vector<double>& mean, comm::Communicator& comm) {
  for (int t = 0; t < steps; ++t) {
    algorithm.after_step(params);
    std::vector<double> sum(params.begin(), params.end());
    comm.allreduce(std::span(sum), comm::ReduceOp::sum);
    for (double& v : sum) v /= comm.size();
    std::vector<float> as_float(sum.begin(), sum.end());
    EXPECT_LT(max_relative_error(as_float, mean), 1e-5) << "mixing moved the mean, step " << t;
  }
}

TEST(GossipMpi, DpsgdAveragesToTheMeanAndKeepsItAtEveryStep) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  std::vector<float> params = random_model(comm.rank());
  Dpsgd dpsgd(comm, make_topology(symmetric_topology(comm.size()), comm.size(), 1),
              GossipMixing::symmetric);
  expect_mean_kept(dpsgd, params, 5, mean, comm);
  consensus_after(dpsgd, params, 400, mean, comm);
}

// --gossip-mixing directed on the SGP code's graph_type 1 (its D-PSGD): every rank hears from one
// in-peer and is heard by one out-peer, so the mixing is column stochastic: the sum of the models
// does not move at any step, and they reach consensus. It is not the pairwise average: at the
// first step (offset 1) odd rank r averages with r − 1, where the symmetric pairs put it with
// r + 1.
TEST(GossipMpi, DirectedDpsgdKeepsTheSumAndDiffersFromPairwise) {
  comm::MpiCommunicator comm;
  if (comm.size() % 2 != 0) GTEST_SKIP() << "the bipartite graphs need an even number of ranks";
  const std::vector<double> mean = true_mean(comm);
  std::vector<float> params = random_model(comm.rank());
  Dpsgd directed(comm, make_topology("bipartite-exponential-two-sided", comm.size(), 1),
                 GossipMixing::directed);
  Dpsgd pairwise(comm, make_topology("bipartite-exponential", comm.size(), 1),
                 GossipMixing::symmetric);
  std::vector<float> paired = params;
  pairwise.after_step(paired);
  std::vector<float> first = params;
  directed.after_step(first);
  if (comm.size() >= 4 && comm.rank() % 2 == 1) {
    EXPECT_GT(max_relative_error(first, std::vector<double>(paired.begin(), paired.end())), 1e-3);
  }
  params = first;
  expect_mean_kept(directed, params, 5, mean, comm);
  consensus_after(directed, params, 400, mean, comm);
  if (comm.size() >= 4) {  // at P = 2 every graph is symmetric
    EXPECT_THROW(Dpsgd(comm, make_topology("bipartite-exponential-two-sided", comm.size(), 1),
                       GossipMixing::symmetric),
                 std::invalid_argument);
  }
}

// AD-PSGD's lifecycle (start the gossip thread, train, stop it) repeated 50 times: every run must
// end — a hang is caught by the ctest timeout — with the sum of the models unchanged, since each
// pairwise average conserves it.
TEST(GossipMpi, AdpsgdRunsRepeatedlyWithoutHangingAndConservesTheMean) {
  comm::MpiCommunicator comm;
  if (comm.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  const std::vector<double> mean = true_mean(comm);
  for (int run = 0; run < 50; ++run) {
    std::vector<float> params = random_model(comm.rank());
    Adpsgd adpsgd(comm, make_topology("bipartite-exponential", comm.size(), 1),
                  GossipMixing::symmetric, 60);
    adpsgd.begin_training(params);
    for (int t = 0; t < 20; ++t) adpsgd.after_step(params);
    adpsgd.end_training();
    adpsgd.after_step(params);  // picks up the last exchanges (no step: lr = 0)
    const std::span<const float> average = adpsgd.model_for_evaluation(params);
    ASSERT_LT(max_relative_error(average, mean), 1e-5) << "run " << run;
  }
}

// --gossip-mixing directed on graph_type 1 (the SGP code's AD-PSGD). With nothing trained
// (lr = 0) its rounds are exactly the synchronous directed mixing x_r ← (x_r + x_{r−o_k})/2,
// computed here for every rank, one round per planned iteration whoever trained it, and every
// rank ends after running all of them. That is not the pairwise average: at the first round
// (offset 1) odd rank r takes r − 1's model, where the symmetric pairs give it r + 1's.
TEST(GossipMpi, DirectedAdpsgdRunsEveryPlannedRoundOfDirectedMixing) {
  comm::MpiCommunicator comm;
  if (comm.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  const int ranks = comm.size();
  const auto graph = make_topology("bipartite-exponential-two-sided", ranks, 1);
  for (const long iterations : {1L, 9L}) {
    std::vector<std::vector<float>> expected;
    for (int r = 0; r < ranks; ++r) expected.push_back(random_model(r));
    for (long k = 0; k < iterations; ++k) {
      std::vector<std::vector<float>> mixed = expected;
      for (int r = 0; r < ranks; ++r) {
        const int in = graph->in_peers(r, static_cast<std::uint64_t>(k)).front();
        for (std::size_t i = 0; i < kD; ++i)
          mixed[r][i] = (expected[r][i] + expected[in][i]) * 0.5f;
      }
      expected = std::move(mixed);
    }
    std::vector<float> params = random_model(comm.rank());
    Adpsgd adpsgd(comm, make_topology("bipartite-exponential-two-sided", ranks, 1),
                  GossipMixing::directed, 60);
    adpsgd.begin_training(params);
    for (long done = 0; adpsgd.next_iteration(done, iterations); ++done) adpsgd.after_step(params);
    adpsgd.end_training();
    adpsgd.after_step(params);  // picks up the last rounds (no step: lr = 0)
    EXPECT_EQ(params, expected[comm.rank()]) << iterations << " rounds";
    EXPECT_EQ(adpsgd.stats().bytes_received, iterations * kD * sizeof(float));
    if (iterations == 1 && ranks >= 4 && comm.rank() % 2 == 1) {
      const std::vector<float> own = random_model(comm.rank());
      const std::vector<float> next = random_model((comm.rank() + 1) % ranks);
      std::vector<float> pairwise(own.size());
      for (std::size_t i = 0; i < kD; ++i) pairwise[i] = (own[i] + next[i]) * 0.5f;
      EXPECT_NE(params, pairwise);
    }
  }
  if (ranks >= 4) {  // at P = 2 the ring is one peer, across the bipartition
    EXPECT_THROW(Adpsgd(comm, make_topology("ring", ranks, 1), GossipMixing::directed, 60),
                 std::invalid_argument);
  }
}

// The epoch budget is the job's, not each rank's: whoever is faster runs more of the P·n
// iterations, and every epoch hands out exactly P·n of them.
TEST(GossipMpi, AdpsgdSharesEachEpochsIterationBudget) {
  comm::MpiCommunicator comm;
  if (comm.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  std::vector<float> params = random_model(comm.rank());
  Adpsgd adpsgd(comm, make_topology("bipartite-exponential", comm.size(), 1),
                GossipMixing::symmetric, 60);
  adpsgd.begin_training(params);
  for (const long iterations : {50L, 7L, 1L, 30L}) {
    std::int64_t done = 0;
    while (adpsgd.next_iteration(done, iterations)) {
      ++done;
      adpsgd.after_step(params);
    }
    std::int64_t total = done;
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    EXPECT_EQ(total, comm.size() * iterations);
  }
  adpsgd.end_training();
}

// Rank 0 pushes to everyone, everyone else only to rank 0: in-degrees P−1 and 1. Uniform
// averaging would drift towards rank 0; push-sum's weights de-bias it exactly.
class Star final : public Topology {
 public:
  using Topology::Topology;
  std::vector<int> out_peers(int rank, std::uint64_t) const override {
    if (rank != 0) return {0};
    std::vector<int> all;
    for (int q = 1; q < size(); ++q) all.push_back(q);
    return all;
  }
  bool symmetric() const override { return size() == 2; }
};

TEST(GossipMpi, PushSumIsExactOnANonRegularGraph) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  std::vector<float> params = random_model(comm.rank());
  Sgp sgp(comm, std::make_unique<Star>(comm.size()));
  consensus_after(sgp, params, 200, mean, comm);
  std::vector<float> model(kD);
  double total = sgp.weight();
  comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
  EXPECT_NEAR(total, comm.size(), 1e-5 * comm.size());
}

}  // namespace
}  // namespace commsgd::algorithms
