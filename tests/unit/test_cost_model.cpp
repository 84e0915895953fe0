#include <gtest/gtest.h>

#include <string>

#include "algorithms/catalog.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "analysis/report/cost_model.hpp"
#include "analysis/report/open_mpi_tuned.hpp"

namespace commsgd::report {
namespace {

const Link kLink = plain_link(1e-3, 1e-6);  // 1 ms a message, 1 MB/s: every term is easy to add up

// An algorithm's steps priced from an idle link.
double allreduce(AllreduceAlgorithm algorithm, int ranks, double bytes, const Link& link) {
  Transfers transfers(link);
  return allreduce_seconds(algorithm, ranks, bytes, transfers);
}
double allgatherv(AllgathervAlgorithm algorithm, int ranks, double bytes, const Link& link) {
  Transfers transfers(link);
  return allgatherv_seconds(algorithm, ranks, bytes, transfers);
}

Exchange exchange(const std::string& algo, const std::string& aggregation, int workers) {
  Exchange e;
  e.algo = algo;
  e.aggregation = aggregation;
  e.workers = workers;
  e.parameters = 1000;
  e.entries = 10;
  return e;
}

TEST(CostModel, FormulasOfDesignMd) {
  // Dense, P = 4, 4000 bytes: Open MPI runs recursive doubling, log2 4 = 2 exchanges of the
  // whole vector, 2·(α + 4000β) = 2·(1 + 4) ms.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("dense", "", 4), kLink), 0.010);
  EXPECT_EQ(priced_as(exchange("dense", "", 4)), "allreduce recursive_doubling");
  // fp16 on the wire halves the bytes; 3 buckets are 3 allreduces of a third each.
  Exchange half = exchange("dense", "", 4);
  half.wire_bytes = 2;
  half.buckets = 3;
  EXPECT_DOUBLE_EQ(communication_seconds(half, kLink), 3 * 2 * (0.001 + 2000.0 / 3 * 1e-6));
  // Allgather, P = 5, 80 bytes a rank: the sizes (⌈log2 5⌉ = 3 messages of 8 bytes), then Open
  // MPI's gather-and-broadcast: 4 blocks into rank 0 (4 ms + 0.32 ms), a binomial broadcast of all
  // five (3·(1 + 0.4) ms).
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("topk", "allgather", 5), kLink),
                   3 * (0.001 + 8e-6) + 0.00432 + 0.0042);
  EXPECT_EQ(priced_as(exchange("topk", "allgather", 5)), "allgatherv gather_broadcast");
  EXPECT_EQ(priced_as(exchange("sgp", "", 5)), "");
  // gTop-k: ⌊log2 P⌋ rounds of (α + 8kβ), two more when P is not a power of two.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 8), kLink), 3 * 0.00108);
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 6), kLink), 4 * 0.00108);
  // Each round merges the partner's set, and the fold in the guest's: where the merge was
  // measured (0.5 ms), 3 merges at P = 8; at P = 6 the guest's and two rounds' (none after the
  // fold out).
  Exchange merging = exchange("gtopk", "gtopk", 8);
  merging.merge_seconds = 5e-4;
  EXPECT_DOUBLE_EQ(communication_seconds(merging, kLink), 3 * (0.00108 + 5e-4));
  merging.workers = 6;
  EXPECT_DOUBLE_EQ(communication_seconds(merging, kLink), 4 * 0.00108 + 3 * 5e-4);
  // Push-sum: one share of (x, w), 4(d+1) bytes, to each out-peer.
  Exchange sgp = exchange("sgp", "", 8);
  sgp.peers_per_iter = 2;
  EXPECT_DOUBLE_EQ(communication_seconds(sgp, kLink), 0.001 + 2 * 0.004004);
  Exchange ring = exchange("dpsgd", "", 8);
  ring.topology = "ring";
  EXPECT_DOUBLE_EQ(communication_seconds(ring, kLink), 0.001 + 2 * 0.004);
  // Signs: an allgather of 8·⌈1000/64⌉ = 128 bytes a rank. P = 4: recursive doubling, 128 then
  // 256 bytes; P = 6: Bruck's, 128, 256, then the 256 still missing; P = 2: one exchange.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("signsgd", "", 4), kLink), 0.002 + 0.000384);
  EXPECT_EQ(priced_as(exchange("signsgd", "", 4)), "allgather recursive_doubling");
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("ef-signsgd", "", 6), kLink), 0.003 + 0.00064);
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("signsgd", "", 2), kLink), 0.001 + 0.000128);
  // PowerSGD: two allreduces of half of the 4·10 bytes a rank sends; P = 4, recursive doubling,
  // 2·(α + 20β) each.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("powersgd", "", 4), kLink),
                   2 * 2 * (0.001 + 20e-6));
  EXPECT_EQ(priced_as(exchange("powersgd", "", 4)), "2 allreduce recursive_doubling");
  // QSGD at 4 levels, buckets of 512: 1000 entries are a bucket of 32 words and one of 488
  // entries in 31, and 2 norms in a word: 512 bytes a rank. P = 2: one exchange.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("qsgd", "", 2), kLink), 0.001 + 0.000512);
  EXPECT_EQ(priced_as(exchange("qsgd", "", 2)), "allgather two_procs");
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("dense", "", 1), kLink), 0.0);
  EXPECT_THROW(communication_seconds(exchange("nope", "", 2), kLink), std::invalid_argument);
}

TEST(CostModel, OnlyWhatOutlastsTheOverlappedComputationIsExposed) {
  const Exchange blocking = exchange("topk", "allgather", 4);
  EXPECT_DOUBLE_EQ(exposed_seconds(blocking, kLink, 1.0, 0.5),
                   communication_seconds(blocking, kLink));
  // osgp hides its exchange behind the next iteration's computation.
  const Exchange osgp = exchange("osgp", "", 4);
  EXPECT_DOUBLE_EQ(exposed_seconds(osgp, kLink, 1.0, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(exposed_seconds(osgp, kLink, 0.001, 0.0005), 0.005004 - 0.001);
  // Dense with buckets: what backward does not cover, but at least the last bucket.
  Exchange dense = exchange("dense", "", 4);
  dense.buckets = 4;
  dense.bucketed = true;
  const double all = communication_seconds(dense, kLink);
  EXPECT_DOUBLE_EQ(exposed_seconds(dense, kLink, 1.0, all / 2), all / 2);
  Exchange last = dense;
  last.buckets = 1;
  last.parameters = 250;
  EXPECT_DOUBLE_EQ(exposed_seconds(dense, kLink, 1.0, 1.0), communication_seconds(last, kLink));
  // One bucket goes on the engine after backward: all of it is exposed, though on a thread (where
  // a run records it: its wait, not its communication).
  Exchange one = exchange("dense", "", 4);
  one.bucketed = true;
  EXPECT_TRUE(communicates_on_a_thread(one));
  EXPECT_FALSE(communicates_on_a_thread(exchange("dense", "", 4)));
  EXPECT_DOUBLE_EQ(exposed_seconds(one, kLink, 1.0, 0.5), communication_seconds(one, kLink));
}

// What the cost model says of each row of `table` it cannot price (each sparse row with every
// aggregation), one line each: empty when it prices them all.
std::string unpriced(const algorithms::ExtensionTable<algorithms::AlgorithmRow>& table) {
  std::string refusals;
  for (const algorithms::AlgorithmRow& row : table) {
    std::vector<std::string> aggregations = {""};
    if (row.family == algorithms::Family::sparse) {
      aggregations = algorithms::aggregation_table().names();
    }
    for (const std::string& aggregation : aggregations) {
      try {
        priced_traffic(row, aggregation);
      } catch (const std::invalid_argument& e) {
        refusals += std::string(e.what()) + "\n";
      }
    }
  }
  return refusals;
}

// The cost model prices an algorithm by its row: each row of the build states what it sends,
// and each is priced above zero at P = 4.
TEST(CostModel, EveryAlgorithmRowIsPriced) {
  EXPECT_EQ(unpriced(algorithms::algorithm_table()), "");
  for (const algorithms::AlgorithmRow& row : algorithms::algorithm_table()) {
    const std::string aggregation(row.aggregation);
    EXPECT_GT(communication_seconds(exchange(std::string(row.name), aggregation, 4), kLink), 0)
        << row.name;
  }
}

// A row that states no traffic trains, but the cost model names it rather than price it as free:
// the test above fails for a table with such a row.
TEST(CostModel, ARowThatStatesNoTrafficIsNamed) {
  algorithms::ExtensionTable<algorithms::AlgorithmRow> table("--algo", "algorithm", {});
  for (const algorithms::AlgorithmRow& row : algorithms::algorithm_table()) table.add(row);
  algorithms::AlgorithmRow silent = algorithms::find_algorithm("sgp");
  silent.name = "silent-sgp";
  silent.traffic = algorithms::Traffic::unstated;
  table.add(silent);
  EXPECT_EQ(unpriced(table),
            "cost model: no formula for --algo silent-sgp: its row states no traffic "
            "(AlgorithmRow::traffic)\n");
  EXPECT_THROW(communication_seconds(exchange("silent-sgp", "", 4), kLink), std::invalid_argument);
}

// The fixed decision rules of Open MPI 4.1.4's coll/tuned (coll_tuned_decision_fixed.c), at the
// sizes commsgd's runs have: the digits MLP's 614 kB gradient at P = 2 and 4, VGG-16's 59 MB at the
// papers' 32 workers, Top-k's sets of 1 232 and 200 000 bytes.
TEST(OpenMpiTuned, PicksWhatOpenMpi41Picks) {
  using R = AllreduceAlgorithm;
  EXPECT_EQ(tuned_allreduce(2, 614440), R::rabenseifner);
  EXPECT_EQ(tuned_allreduce(2, 1000), R::recursive_doubling);
  EXPECT_EQ(tuned_allreduce(2, 100000), R::ring);  // "segmented ring" with no segment size
  EXPECT_EQ(tuned_allreduce(4, 4000), R::recursive_doubling);
  EXPECT_EQ(tuned_allreduce(4, 614440), R::rabenseifner);
  EXPECT_EQ(tuned_allreduce(32, 59e6), R::rabenseifner);
  EXPECT_EQ(tuned_allreduce(200, 100000), R::nonoverlapping);
  using G = AllgathervAlgorithm;
  EXPECT_EQ(tuned_allgatherv(2, 1232), G::ring);
  EXPECT_EQ(tuned_allgatherv(2, 200000), G::two_procs);
  EXPECT_EQ(tuned_allgatherv(4, 1232), G::neighbor_exchange);
  EXPECT_EQ(tuned_allgatherv(4, 200000), G::bruck);
  EXPECT_EQ(tuned_allgatherv(16, 200000), G::bruck);
  EXPECT_EQ(tuned_allgatherv(16, 300000), G::ring);
  EXPECT_EQ(tuned_allgatherv(32, 200000), G::ring);
  EXPECT_EQ(tuned_allgatherv(2048, 200000), G::neighbor_exchange);
  using A = AllgatherAlgorithm;
  EXPECT_EQ(tuned_allgather(2, 34000), A::two_procs);
  EXPECT_EQ(tuned_allgather(16, 34000), A::recursive_doubling);
  EXPECT_EQ(tuned_allgather(40, 34000), A::neighbor_exchange);
  EXPECT_EQ(tuned_allgather(40, 70000), A::ring);
  EXPECT_EQ(tuned_allgather(300, 100), A::bruck);
  EXPECT_EQ(tuned_allgather(5000, 1), A::recursive_doubling);
}

TEST(OpenMpiTuned, EachAlgorithmIsPricedByItsSteps) {
  using R = AllreduceAlgorithm;
  const double n = 4000;  // 4 ms at β
  // Ring, P = 4: 2(P−1) = 6 messages, 2(P−1)/P·n = 1.5n bytes.
  EXPECT_DOUBLE_EQ(allreduce(R::ring, 4, n, kLink), 0.006 + 0.006);
  // Rabenseifner, P = 4: 2·log2 4 = 4 messages, the ring's bytes.
  EXPECT_DOUBLE_EQ(allreduce(R::rabenseifner, 4, n, kLink), 0.004 + 0.006);
  // P = 6: the two ranks beyond 4 hand over the vector and get it back, two whole-vector steps.
  EXPECT_DOUBLE_EQ(allreduce(R::rabenseifner, 6, n, kLink), 0.010 + 2 * 0.005);
  EXPECT_DOUBLE_EQ(allreduce(R::recursive_doubling, 6, n, kLink), 2 * 0.005 + 2 * 0.005);
  EXPECT_DOUBLE_EQ(allreduce(R::basic_linear, 3, n, kLink), 4 * 0.005);
  EXPECT_DOUBLE_EQ(allreduce(R::nonoverlapping, 5, n, kLink), 6 * 0.005);
  EXPECT_DOUBLE_EQ(allreduce(R::ring, 1, n, kLink), 0.0);
  using G = AllgathervAlgorithm;
  const double m = 80;  // 0.08 ms a block
  EXPECT_DOUBLE_EQ(allgatherv(G::bruck, 5, m, kLink), 0.003 + 0.00032);
  EXPECT_DOUBLE_EQ(allgatherv(G::ring, 5, m, kLink), 0.004 + 0.00032);
  EXPECT_DOUBLE_EQ(allgatherv(G::neighbor_exchange, 6, m, kLink), 0.003 + 0.0004);
  // Open MPI runs the ring for an odd number of ranks.
  EXPECT_DOUBLE_EQ(allgatherv(G::neighbor_exchange, 5, m, kLink), allgatherv(G::ring, 5, m, kLink));
  EXPECT_DOUBLE_EQ(allgatherv(G::two_procs, 2, m, kLink), 0.001 + 0.00008);
}

// An Open MPI collective's exchanges after its first are follow-on steps: each costs the link's
// follow_on_extra more (interpolated, in proportion beyond the largest size measured). The
// extra is what the ping-pong's two receive-first steps took beyond two exchanges.
TEST(CostModel, ACollectivesStepsAfterItsFirstPayTheFollowOnExtra) {
  Link link = kLink;
  link.follow_on_extra = {{1000, 0.0005}, {4000, 0.002}};
  using R = AllreduceAlgorithm;
  // Rabenseifner, P = 2: an exchange of n/2, then a follow-on of n/2 (0.001 extra at 2000 bytes).
  EXPECT_DOUBLE_EQ(allreduce(R::rabenseifner, 2, 4000, link), 0.003 + 0.003 + 0.001);
  // Ring, P = 4: six steps of 1000 bytes, five of them follow-ons.
  EXPECT_DOUBLE_EQ(allreduce(R::ring, 4, 4000, link), 6 * 0.002 + 5 * 0.0005);
  // Recursive doubling, P = 4: two exchanges of 8000 bytes, twice the largest size's extra.
  EXPECT_DOUBLE_EQ(allreduce(R::recursive_doubling, 4, 8000, link), 2 * 0.009 + 0.004);
  using G = AllgathervAlgorithm;
  EXPECT_DOUBLE_EQ(allgatherv(G::two_procs, 2, 1000, link), 0.002);  // one step: no extra
  EXPECT_DOUBLE_EQ(allgatherv(G::neighbor_exchange, 4, 1000, link), 0.002 + 0.003 + 0.001);
  // Only the collectives' steps: gTop-k's rounds and the gossip are commsgd's own exchanges.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 4), link),
                   communication_seconds(exchange("gtopk", "gtopk", 4), kLink));

  link.exchange.measured = {{1000, 0.002}, {4000, 0.005}};
  const auto extra = follow_on_extra(link.exchange, {{1000, 0.0045}, {4000, 0.0095}});
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_EQ(extra[0].first, 1000);
  EXPECT_DOUBLE_EQ(extra[0].second, 0.0005);
  EXPECT_EQ(extra[1].first, 4000);
  EXPECT_DOUBLE_EQ(extra[1].second, 0.0);  // faster than two exchanges: nothing
}

// A calibrated link prices a message within the measured sizes by the measurements: a shaped
// link's burst passes small messages far faster than its fitted line says.
TEST(CostModel, MeasuredSizesArePricedByTheirMeasurement) {
  Link link = kLink;
  link.exchange.measured = {{1000, 0.0002}, {2000, 0.0004}, {8000, 0.0070}};
  EXPECT_DOUBLE_EQ(link.message_seconds(500), 0.0002);   // below: the smallest one's time
  EXPECT_DOUBLE_EQ(link.message_seconds(1500), 0.0003);  // between two: a straight line
  EXPECT_DOUBLE_EQ(link.message_seconds(5000), 0.0037);
  EXPECT_DOUBLE_EQ(link.message_seconds(8000), 0.0070);
  EXPECT_DOUBLE_EQ(link.message_seconds(10000), 0.001 + 0.01);  // beyond: α + β·bytes
  EXPECT_DOUBLE_EQ(kLink.message_seconds(1500), 0.001 + 0.0015);
  // gTop-k at P = 2, 10 entries of 8 bytes: one message of 80 bytes, below the measured sizes.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 2), link), 0.0002);
  // Ring allreduce of 4000 bytes at P = 2 (Open MPI: recursive doubling below 4 kB): one
  // exchange of the whole vector, 4000 bytes, measured between 2000 and 8000.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("dense", "", 2), link),
                   0.0004 + 2000.0 / 6000 * 0.0066);
}

// Steps that go one way while the other direction is idle are priced by the one-way
// calibration: a reduce or broadcast tree, the gather of Open MPI's default allgatherv, gTop-k's
// fold. Exchanges keep the exchange's price.
TEST(CostModel, OneWayStepsArePricedByTheOneWayCalibration) {
  Link link = kLink;
  EXPECT_DOUBLE_EQ(link.one_way_seconds(1000), link.message_seconds(1000));  // none: the same
  link.one_way = plain_link(2e-3, 1e-6).exchange;
  EXPECT_DOUBLE_EQ(link.one_way_seconds(1000), 0.003);
  EXPECT_DOUBLE_EQ(link.message_seconds(1000), 0.002);
  using R = AllreduceAlgorithm;
  EXPECT_DOUBLE_EQ(allreduce(R::basic_linear, 3, 1000, link), 4 * 0.003);
  EXPECT_DOUBLE_EQ(allreduce(R::nonoverlapping, 4, 1000, link), 4 * 0.003);
  EXPECT_DOUBLE_EQ(allreduce(R::recursive_doubling, 6, 1000, link),
                   2 * 0.002 + 2 * 0.003);  // two exchanges, the fold one way
  EXPECT_DOUBLE_EQ(allreduce(R::ring, 4, 1000, link), 6 * (0.001 + 250e-6));
  EXPECT_DOUBLE_EQ(allgatherv(AllgathervAlgorithm::gather_broadcast, 4, 100, link),
                   3 * (0.002 + 1e-4) + 2 * (0.002 + 4e-4));
  // gTop-k at P = 6, sets of 80 bytes: two butterfly exchanges, the fold in and out one way.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 6), link),
                   2 * (0.001 + 8e-5) + 2 * (0.002 + 8e-5));
}

// A link shaped by a token bucket, calibrated after idle: an iteration's first exchange has the
// after-idle latency, later ones the back-to-back one. Each takes from the bucket what the
// computation before the iteration refilled (at most the burst) at the hosts' speed; the bytes
// beyond cost what back-to-back exchanges of that size cost beyond their latency.
TEST(CostModel, AShapedLinkPassesWhatItsBucketHoldsAtTheHostsSpeed) {
  Link link = kLink;  // back to back: 1 ms + 1 µs a byte; the bucket refills by 1000 bytes a ms
  link.after_idle = plain_link(2e-4, 1e-8).exchange;
  link.burst_bytes = 3000;
  // Computed for 2 ms: 2000 bytes in the bucket. A message of 1000 passes from it.
  Transfers after_two_ms(link, 2e-3);
  EXPECT_DOUBLE_EQ(after_two_ms.exchange(1000), 2e-4 + 1000 * 1e-8);
  // The next one finds 1000 bytes left: 2500 bytes pass 1000 from it, 1500 at the link's rate.
  EXPECT_DOUBLE_EQ(after_two_ms.exchange(2500), 1e-3 + 1000 * 1e-8 + 1500 * 1e-6);
  // And the bucket is empty.
  EXPECT_DOUBLE_EQ(after_two_ms.exchange(100), 1e-3 + 100 * 1e-6);
  // Computed for a second: the bucket holds its burst, no more.
  EXPECT_DOUBLE_EQ(Transfers(link, 1.0).exchange(5000), 2e-4 + 3000 * 1e-8 + 2000 * 1e-6);
  // Beyond the bucket, a measured back-to-back curve prices the bytes: 2000 bytes measured at
  // 1.5 ms, 0.5 ms beyond its smallest size's time, which is its latency.
  Link measured = link;
  measured.exchange.measured = {{8, 1e-3}, {2000, 1.5e-3}, {8000, 7e-3}};
  EXPECT_DOUBLE_EQ(Transfers(measured, 1.0).exchange(5000), 2e-4 + 3000 * 1e-8 + 0.5e-3);
  // Dense at P = 2 (recursive doubling, one exchange of all 4000 bytes) after a second's
  // computation: 3000 bytes from the full bucket, 1000 at the link's rate.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("dense", "", 2), link, 1.0),
                   2e-4 + 3000 * 1e-8 + 1000 * 1e-6);
  // Without computation before it (a thread of its own), or without an after-idle calibration,
  // every message costs its back-to-back price.
  EXPECT_DOUBLE_EQ(Transfers(link).exchange(5000), 1e-3 + 5e-3);
  EXPECT_DOUBLE_EQ(Transfers(kLink, 1.0).exchange(5000), 1e-3 + 5e-3);
  Exchange osgp = exchange("osgp", "", 2);
  EXPECT_DOUBLE_EQ(exposed_seconds(osgp, link, 1e-3, 0), 1e-3 + 4004 * 1e-6 - 1e-3);
}

// Where the calibration measured the first message's latency by the computation before it, an
// iteration's first message has the latency after as long a computation as the iteration's,
// between the two nearest measured (and the nearest one outside them); later messages the
// back-to-back one.
TEST(CostModel, TheFirstMessageHasTheLatencyAfterTheIterationsComputation) {
  Link link = kLink;
  link.after_idle = plain_link(2e-4, 1e-8).exchange;
  link.burst_bytes = 3000;
  link.latency_after_idle = {{1e-3, 3e-4}, {3e-3, 5e-4}};
  Transfers after_two_ms(link, 2e-3);
  EXPECT_DOUBLE_EQ(after_two_ms.exchange(1000), 4e-4 + 1000 * 1e-8);
  EXPECT_DOUBLE_EQ(after_two_ms.exchange(0), 1e-3);
  EXPECT_DOUBLE_EQ(Transfers(link, 1e-4).exchange(0), 3e-4);
  EXPECT_DOUBLE_EQ(Transfers(link, 1.0).exchange(0), 5e-4);
}

}  // namespace
}  // namespace commsgd::report
