// Multi-rank tests of dense S-SGD's buckets (P = 1..5): whatever the bucket size, wire type and
// order in which backward reports gradients, every rank ends with the mean of all ranks'
// gradients; buckets travel before synchronize_gradients() is called; fp16 and bf16 halve the
// bytes, and a half-precision reduction the wire cannot do is rejected without being counted.
// Every rank runs every test; no check skips a collective.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/dense.hpp"

namespace commsgd::algorithms {
namespace {

// Made only as EngineStoppedFirst<Dense>, which stops the engine before Dense's members go.
static_assert(!std::is_destructible_v<Dense> && std::is_destructible_v<EngineStoppedFirst<Dense>>);

// Parameter sizes of a small model; the gradient buffer holds them back to back.
const std::vector<std::size_t> kParameterSizes = {300, 7, 1000, 1, 64, 513};

std::size_t total_entries() {
  std::size_t d = 0;
  for (const std::size_t n : kParameterSizes) d += n;
  return d;
}

std::vector<float> gradient_of(int rank, int iteration) {
  std::mt19937 rng(1000 * static_cast<unsigned>(iteration) + static_cast<unsigned>(rank));
  std::normal_distribution<float> normal(0.1f * static_cast<float>(rank), 1.0f);
  std::vector<float> g(total_entries());
  for (float& v : g) v = normal(rng);
  return g;
}

std::vector<double> mean_gradient(int ranks, int iteration) {
  std::vector<double> mean(total_entries(), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float> g = gradient_of(r, iteration);
    for (std::size_t i = 0; i < g.size(); ++i) mean[i] += g[i];
  }
  for (double& m : mean) m /= ranks;
  return mean;
}

AlgorithmConfig dense_config(std::size_t bucket_bytes, comm::DataType wire) {
  AlgorithmConfig config;
  config.bucket_bytes = bucket_bytes;
  config.wire = wire;
  return config;
}

enum class Reporting { backward_order, shuffled, none, half };

// What a backward does: the parameters' gradients reported one by one, last parameter first (or
// shuffled, or some never reported, as for parameters that took no part).
void run_backward(Dense& dense, std::span<float> grads, Reporting how, std::mt19937& rng) {
  dense.begin_backward(grads);
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t offset = 0;
  for (const std::size_t n : kParameterSizes) {
    ranges.emplace_back(offset, n);
    offset += n;
  }
  std::reverse(ranges.begin(), ranges.end());
  if (how == Reporting::none) return;
  if (how == Reporting::shuffled) std::shuffle(ranges.begin(), ranges.end(), rng);
  if (how == Reporting::half) ranges.resize(ranges.size() / 2);
  for (const auto& [begin, count] : ranges) dense.gradient_ready(begin, count);
}

using Case = std::tuple<std::size_t, comm::DataType, Reporting>;
class DenseBuckets : public ::testing::TestWithParam<Case> {};

TEST_P(DenseBuckets, EveryRankGetsTheMeanGradient) {
  const auto [bucket_bytes, wire, reporting] = GetParam();
  comm::MpiCommunicator comm;
  const auto dense = make_engine_backed<Dense>(comm, dense_config(bucket_bytes, wire));
  std::mt19937 rng(5);  // the same shuffles on every rank, though no rank depends on it
  // Relative to the gradient's scale (about 1): float sums, or one rounding of each share and of
  // each partial sum in 16 bits (fp16: 2^-11, bf16: 2^-8 per rounding).
  const double tolerance = wire == comm::DataType::f32   ? 1e-6
                           : wire == comm::DataType::f16 ? 4e-3 * comm.size()
                                                         : 3e-2 * comm.size();
  for (int iteration = 0; iteration < 3; ++iteration) {
    std::vector<float> grads = gradient_of(comm.rank(), iteration);
    if (bucket_bytes > 0) run_backward(*dense, grads, reporting, rng);
    dense->synchronize_gradients(grads);
    const std::vector<double> mean = mean_gradient(comm.size(), iteration);
    double worst = 0;
    for (std::size_t i = 0; i < grads.size(); ++i) {
      worst = std::max(worst, std::abs(grads[i] - mean[i]) / (1.0 + std::abs(mean[i])));
    }
    EXPECT_LE(worst, tolerance) << "iteration " << iteration;
  }
  const AlgorithmStats s = dense->stats();
  // Ring allreduce accounting, bucket by bucket: 2(P-1)/P of each bucket's bytes.
  const std::uint64_t wire_bytes = wire == comm::DataType::f32 ? 4 : 2;
  const auto p = static_cast<std::uint64_t>(comm.size());
  const GradientBuckets buckets(total_entries(),
                                bucket_bytes > 0 ? bucket_bytes / 4 : total_entries());
  std::uint64_t per_backward = 0;
  for (std::size_t b = 0; b < buckets.count(); ++b) {
    const GradientBuckets::Range r = buckets.range(b);
    per_backward += 2 * (p - 1) * (r.end - r.begin) * wire_bytes / p;
  }
  EXPECT_EQ(s.bytes_sent, 3 * per_backward) << "bytes on the wire";
  EXPECT_EQ(s.entries_sent, 3 * total_entries());
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [bytes, wire, reporting] = info.param;
  const char* wires[] = {"fp32", "", "", "", "fp16", "bf16"};
  const char* orders[] = {"BackwardOrder", "Shuffled", "NoneReported", "HalfReported"};
  return "Bucket" + std::to_string(bytes) + "B_" + wires[static_cast<int>(wire)] + "_" +
         orders[static_cast<int>(reporting)];
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, DenseBuckets,
    ::testing::Combine(::testing::Values(std::size_t{0}, std::size_t{4}, std::size_t{28},
                                         std::size_t{1200}, std::size_t{25u << 20}),
                       ::testing::Values(comm::DataType::f32, comm::DataType::f16,
                                         comm::DataType::bf16),
                       ::testing::Values(Reporting::backward_order, Reporting::shuffled,
                                         Reporting::none, Reporting::half)),
    case_name);

// The point of buckets: they are reduced while backward still runs. Once gradients have been
// reported, the comm thread reduces buckets without synchronize_gradients() being called.
// Every rank rejects the call alike before any transfer, so none is left waiting in it.
TEST(Counters, ARejectedCallCountsNothing) {
  comm::MpiCommunicator comm;
  std::vector<std::uint16_t> halves(8, 0);
  const comm::CommCounters before = comm.counters();
  EXPECT_THROW(
      comm.allreduce(halves.data(), halves.size(), comm::DataType::f16, comm::ReduceOp::max),
      std::invalid_argument);
  EXPECT_EQ(comm.counters().calls, before.calls);
  EXPECT_EQ(comm.counters().bytes_sent, before.bytes_sent);
  comm.allreduce(halves.data(), halves.size(), comm::DataType::f16, comm::ReduceOp::sum);
  EXPECT_EQ(comm.counters().calls, before.calls + 1);
}

TEST(DenseOverlap, BucketsTravelBeforeSynchronizeIsCalled) {
  comm::MpiCommunicator comm;
  const auto dense = make_engine_backed<Dense>(
      comm, dense_config(400, comm::DataType::f32));  // 100 floats a bucket: 19 buckets
  std::vector<float> grads = gradient_of(comm.rank(), 0);
  std::mt19937 rng(1);
  run_backward(*dense, grads, Reporting::backward_order, rng);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (dense->stats().overlapped_seconds == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no bucket was reduced by itself";
    std::this_thread::yield();
  }
  dense->synchronize_gradients(grads);
  const std::vector<double> mean = mean_gradient(comm.size(), 0);
  for (std::size_t i = 0; i < grads.size(); ++i) ASSERT_NEAR(grads[i], mean[i], 1e-5);
}

TEST(DenseOverlap, AGradientReportedTwiceIsAnError) {
  comm::MpiCommunicator comm;
  const auto dense = make_engine_backed<Dense>(comm, dense_config(400, comm::DataType::f32));
  std::vector<float> grads = gradient_of(comm.rank(), 0);
  dense->begin_backward(grads);
  dense->gradient_ready(0, 300);
  EXPECT_THROW(dense->gradient_ready(0, 300), std::logic_error);
  dense->synchronize_gradients(grads);  // every rank still takes part in every bucket
}

}  // namespace
}  // namespace commsgd::algorithms
