// Multi-rank tests of the gossip family under mpirun (P = 2..8): pure averaging reaches the true
// mean, push-sum weights are conserved, and push-sum de-biases exactly on a non-regular graph.
// Every rank runs every test; no check skips a collective.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/gossip/adpsgd.hpp"
#include "algorithms/gossip/consensus.hpp"
#include "algorithms/gossip/dpsgd.hpp"
#include "algorithms/gossip/osgp.hpp"
#include "algorithms/gossip/sgp.hpp"

namespace commsgd::algorithms {
namespace {

// An engine-backed algorithm is made only as EngineStoppedFirst (its engine stopped before its
// members go): one declared on the stack, whose engine would outlive nothing, does not compile.
static_assert(!std::is_destructible_v<Osgp> && !std::is_destructible_v<Adpsgd>);
static_assert(std::is_destructible_v<EngineStoppedFirst<Osgp>>);

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

// One iteration at lr = 0: the optimizer's step, between before_step and after_step, leaves the
// parameters alone, so the iteration is pure mixing.
void mixing_step(Algorithm& algorithm, std::vector<float>& params) {
  algorithm.before_step(params);
  algorithm.after_step(params);
}

// Iterations at lr = 0. Checks the consensus distance against the one of the ranks' initial models.
double consensus_after(Algorithm& algorithm, std::vector<float>& params, int iterations,
                       const std::vector<double>& mean, comm::Communicator& comm) {
  ConsensusAverage initial;
  std::vector<float> initial_model = random_model(comm.rank());
  initial.measure(initial_model, comm, false);
  const double start = initial.distance();
  EXPECT_GT(start, 0.5);
  for (int t = 0; t < iterations; ++t) mixing_step(algorithm, params);
  const std::vector<float> own = params;
  algorithm.begin_evaluation(params, false);
  EXPECT_LT(max_relative_error(params, mean), 1e-5) << "consensus value is the initial mean";
  algorithm.end_evaluation(params);
  EXPECT_EQ(params, own) << "evaluation puts the rank's own model back";
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
    mixing_step(sgp, params);
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
    const auto osgp = make_engine_backed<Osgp>(comm, make_topology("exponential", comm.size(), 1),
                                               OsgpOverlap::bounded_staleness, staleness);
    std::vector<float> model = params;
    // Staleness slows mixing: more rounds until the ranks agree to float precision.
    consensus_after(*osgp, model, 400, mean, comm);
    double total = osgp->flushed_weight();
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
    const auto osgp =
        make_engine_backed<Osgp>(comm, make_topology("exponential-two-sided", comm.size(), 1),
                                 OsgpOverlap::one_in_flight, synch_freq);
    std::vector<float> model = random_model(comm.rank());
    consensus_after(*osgp, model, 600, mean, comm);
    EXPECT_EQ(osgp->most_in_flight(), 1u) << "synch_freq " << synch_freq;
    double total = osgp->flushed_weight();
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    EXPECT_NEAR(total, comm.size(), 1e-5 * comm.size()) << "synch_freq " << synch_freq;
  }
  // Bounded staleness τ starts one every step: up to τ + 1 of them may be unfinished.
  const auto bounded = make_engine_backed<Osgp>(comm, make_topology("exponential", comm.size(), 1),
                                                OsgpOverlap::bounded_staleness, 3);
  std::vector<float> model = random_model(comm.rank());
  for (int t = 0; t < 50; ++t) mixing_step(*bounded, model);
  EXPECT_GE(bounded->most_in_flight(), 1u);
  EXPECT_LE(bounded->most_in_flight(), 4u);
}

// `steps` mixing steps (lr = 0), after each of which the mean over ranks is still `mean`.
void expect_mean_kept(Algorithm& algorithm, std::vector<float>& params, int steps,
                      const std::vector<double>& mean, comm::Communicator& comm) {
  for (int t = 0; t < steps; ++t) {
    mixing_step(algorithm, params);
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
  mixing_step(pairwise, paired);
  std::vector<float> first = params;
  mixing_step(directed, first);
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
    const auto adpsgd = make_engine_backed<Adpsgd>(
        comm, make_topology("bipartite-exponential", comm.size(), 1), GossipMixing::symmetric);
    adpsgd->begin_training(params);
    for (int t = 0; t < 20; ++t) mixing_step(*adpsgd, params);
    adpsgd->end_training();
    mixing_step(*adpsgd, params);  // picks up the last exchanges (no step: lr = 0)
    adpsgd->begin_evaluation(params, false);
    ASSERT_LT(max_relative_error(params, mean), 1e-5) << "run " << run;
    adpsgd->end_evaluation(params);
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
    const auto adpsgd = make_engine_backed<Adpsgd>(
        comm, make_topology("bipartite-exponential-two-sided", ranks, 1), GossipMixing::directed);
    adpsgd->begin_training(params);
    for (long done = 0; adpsgd->next_iteration(done, iterations); ++done)
      mixing_step(*adpsgd, params);
    adpsgd->end_training();
    mixing_step(*adpsgd, params);  // picks up the last rounds (no step: lr = 0)
    EXPECT_EQ(params, expected[comm.rank()]) << iterations << " rounds";
    // One model a round, each after its header (the size in floats).
    EXPECT_EQ(adpsgd->stats().bytes_received,
              iterations * (kD * sizeof(float) + sizeof(std::uint64_t)));
    if (iterations == 1 && ranks >= 4 && comm.rank() % 2 == 1) {
      const std::vector<float> own = random_model(comm.rank());
      const std::vector<float> next = random_model((comm.rank() + 1) % ranks);
      std::vector<float> pairwise(own.size());
      for (std::size_t i = 0; i < kD; ++i) pairwise[i] = (own[i] + next[i]) * 0.5f;
      EXPECT_NE(params, pairwise);
    }
  }
  if (ranks >= 4) {  // at P = 2 the ring is one peer, across the bipartition
    EXPECT_THROW(
        make_engine_backed<Adpsgd>(comm, make_topology("ring", ranks, 1), GossipMixing::directed),
        std::invalid_argument);
  }
}

// The epoch budget is the job's, not each rank's: whoever is faster runs more of the P·n
// iterations, and every epoch hands out exactly P·n of them.
TEST(GossipMpi, AdpsgdSharesEachEpochsIterationBudget) {
  comm::MpiCommunicator comm;
  if (comm.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  std::vector<float> params = random_model(comm.rank());
  const auto adpsgd = make_engine_backed<Adpsgd>(
      comm, make_topology("bipartite-exponential", comm.size(), 1), GossipMixing::symmetric);
  adpsgd->begin_training(params);
  for (const long iterations : {50L, 7L, 1L, 30L}) {
    std::int64_t done = 0;
    while (adpsgd->next_iteration(done, iterations)) {
      ++done;
      mixing_step(*adpsgd, params);
    }
    std::int64_t total = done;
    comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
    EXPECT_EQ(total, comm.size() * iterations);
  }
  adpsgd->end_training();
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
  double total = sgp.weight();
  comm.allreduce(std::span(&total, 1), comm::ReduceOp::sum);
  EXPECT_NEAR(total, comm.size(), 1e-5 * comm.size());
}

// As in the SGP code, the optimizer steps on the numerator: between before_step and after_step
// the parameters hold x = w·z, so that weight decay acts on x. Meaningful where w moved off 1:
// on the star, at P > 2.
TEST(GossipMpi, TheOptimizerStepsOnTheNumerator) {
  comm::MpiCommunicator comm;
  std::vector<float> params = random_model(comm.rank());
  Sgp sgp(comm, std::make_unique<Star>(comm.size()));
  for (int t = 0; t < 5; ++t) mixing_step(sgp, params);
  const std::vector<float> z = params;
  const float w = sgp.weight();
  double off_one = std::abs(w - 1.0f);
  comm.allreduce(std::span(&off_one, 1), comm::ReduceOp::max);
  if (comm.size() > 2) {
    EXPECT_GT(off_one, 0.01);
  }
  sgp.before_step(params);
  for (std::size_t i = 0; i < kD; ++i) ASSERT_EQ(params[i], z[i] * w) << i;
  sgp.after_step(params);
}

// A mixing round in slices of 7 floats (of 1000: the last slice is short) delivers every in-peer's
// whole message, slice by slice in order, through one slice of scratch per in-peer, and every
// in-peer's head.
TEST(GossipMpi, ARoundInSlicesDeliversEveryInPeersWholeMessage) {
  comm::MpiCommunicator comm;
  const std::unique_ptr<Topology> topology = make_topology("complete", comm.size(), 1);
  const std::vector<int> out = topology->out_peers(comm.rank(), 0);
  const std::vector<int> in = topology->in_peers(comm.rank(), 0);
  const std::vector<float> message = random_model(comm.rank());
  std::vector<std::vector<float>> arrived(in.size());
  kernels::ops::Storage<float> scratch;
  const float head = static_cast<float>(comm.rank());
  std::vector<float> heads(in.size(), -1.0f);
  std::size_t next = 0;
  exchange_in_slices(
      comm, message, out, in, scratch,
      [&](std::size_t offset, std::size_t count, kernels::Buffer<const float> arrived_slices) {
        const std::span<const float> received = arrived_slices.host("the test");
        EXPECT_EQ(offset, next);
        EXPECT_LE(count, 7u);
        next = offset + count;
        ASSERT_EQ(received.size(), in.size() * count);
        for (std::size_t i = 0; i < in.size(); ++i) {
          const std::span<const float> slice = received.subspan(i * count, count);
          arrived[i].insert(arrived[i].end(), slice.begin(), slice.end());
        }
      },
      {std::span(&head, 1), std::span(heads)}, 7);
  EXPECT_EQ(next, kD);
  EXPECT_EQ(scratch.size(), in.size() * 7);
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(arrived[i], random_model(in[i])) << "from rank " << in[i];
    EXPECT_EQ(heads[i], static_cast<float>(in[i]));
  }
}

// The consensus allreduced in slices is the one allreduced whole, its distance is
// (1/P)·Σ_r ‖x_r − x̄‖² of the true mean, and without replace_by_average the model stays.
TEST(GossipMpi, ConsensusInSlicesIsTheWholeOne) {
  comm::MpiCommunicator comm;
  const std::vector<double> mean = true_mean(comm);
  const std::vector<float> model = random_model(comm.rank());
  std::vector<float> whole = model, sliced = model, kept = model;
  ConsensusAverage one_slice, small_slices(7), measured_only(7);
  one_slice.measure(whole, comm, true);
  small_slices.measure(sliced, comm, true);
  measured_only.measure(kept, comm, false);

  EXPECT_LT(max_relative_error(sliced, mean), 1e-6);
  EXPECT_LT(max_relative_error(whole, mean), 1e-6);
  EXPECT_EQ(kept, model);
  double squared = 0;
  for (std::size_t i = 0; i < kD; ++i) squared += (model[i] - mean[i]) * (model[i] - mean[i]);
  comm.allreduce(std::span(&squared, 1), comm::ReduceOp::sum);
  const double distance = squared / comm.size();
  EXPECT_NEAR(small_slices.distance(), distance, 1e-5 * distance);
  EXPECT_NEAR(one_slice.distance(), distance, 1e-5 * distance);
  EXPECT_EQ(measured_only.distance(), small_slices.distance());
}

// --eval-model local: the rank's own model is evaluated (left in place), the consensus distance
// is still measured, and push-sum's x / w is what stands there after evaluation.
TEST(GossipMpi, EvaluatingTheOwnModelLeavesItAndStillMeasuresTheDistance) {
  comm::MpiCommunicator comm;
  std::vector<float> params = random_model(comm.rank());
  Sgp sgp(comm, make_topology("exponential", comm.size(), 1));
  for (int t = 0; t < 3; ++t) mixing_step(sgp, params);
  const std::vector<float> own = params;
  sgp.begin_evaluation(params, true);
  EXPECT_EQ(params, own);
  std::vector<float> copy = own;
  ConsensusAverage consensus;
  consensus.measure(copy, comm, false);
  EXPECT_EQ(*sgp.consensus_distance(), consensus.distance());
  sgp.end_evaluation(params);
  EXPECT_EQ(params, own);
}

}  // namespace
}  // namespace commsgd::algorithms
