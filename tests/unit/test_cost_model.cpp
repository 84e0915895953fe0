#include "analysis/report/cost_model.hpp"

#include <gtest/gtest.h>

namespace commsgd::report {
namespace {

constexpr Link kLink{1e-3, 1e-6};  // 1 ms a message, 1 MB/s: every term is easy to add up

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
  // Ring allreduce, P = 4: 2α(P−1) + 2(P−1)/P·4d·β = 6 ms + 6 ms.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("dense", "", 4), kLink), 0.012);
  // fp16 on the wire halves the bandwidth term; 3 buckets pay the latency three times.
  Exchange half = exchange("dense", "", 4);
  half.wire_bytes = 2;
  half.buckets = 3;
  EXPECT_DOUBLE_EQ(communication_seconds(half, kLink), 0.018 + 0.003);
  // Allgather, P = 5: α·⌈log2 5⌉ + (P−1)·8k·β = 3 ms + 0.32 ms.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("topk", "allgather", 5), kLink), 0.00332);
  // gTop-k: ⌊log2 P⌋ rounds of (α + 8kβ), two more when P is not a power of two.
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 8), kLink), 3 * 0.00108);
  EXPECT_DOUBLE_EQ(communication_seconds(exchange("gtopk", "gtopk", 6), kLink), 4 * 0.00108);
  // Push-sum: one share of (x, w), 4(d+1) bytes, to each out-peer.
  Exchange sgp = exchange("sgp", "", 8);
  sgp.peers_per_iter = 2;
  EXPECT_DOUBLE_EQ(communication_seconds(sgp, kLink), 0.001 + 2 * 0.004004);
  Exchange ring = exchange("dpsgd", "", 8);
  ring.topology = "ring";
  EXPECT_DOUBLE_EQ(communication_seconds(ring, kLink), 0.001 + 2 * 0.004);
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
  const double all = communication_seconds(dense, kLink);
  EXPECT_DOUBLE_EQ(exposed_seconds(dense, kLink, 1.0, all / 2), all / 2);
  Exchange last = dense;
  last.buckets = 1;
  last.parameters = 250;
  EXPECT_DOUBLE_EQ(exposed_seconds(dense, kLink, 1.0, 1.0), communication_seconds(last, kLink));
}

}  // namespace
}  // namespace commsgd::report
