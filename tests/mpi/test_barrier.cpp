// --barrier-before-communicate (P = 3): the time a rank waits for the slowest one moves from
// communicate to wait, and the result is the same. Rank 0 computes for a while before every
// exchange; without the barrier, the others spend that while inside the exchange.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/catalog.hpp"
#include "algorithms/comm/mpi_communicator.hpp"

namespace commsgd::algorithms {
namespace {

constexpr std::size_t kEntries = 5000;
constexpr double kLateSeconds = 0.2;

// Rank 0 arriving late, as an oversubscribed core makes it: busy for kLateSeconds.
void arrive(int rank) {
  if (rank != 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kLateSeconds);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

struct Measured {
  int rank = 0;
  AlgorithmStats stats;
  std::vector<float> grads;
};

Measured exchange_once(const std::string& algo, bool barrier) {
  comm::MpiCommunicator comm;
  AlgorithmConfig config;
  config.algo = algo;
  config.bucket_bytes = 0;
  config.density = 0.01;
  config.barrier_before_communicate = barrier;
  const std::unique_ptr<Algorithm> algorithm = make_algorithm(config, comm);
  algorithm->set_layout(std::vector<ParameterLayout>{{0, {50, 100}}});  // a matrix, for powersgd
  Measured m;
  m.rank = comm.rank();
  m.grads.resize(kEntries);
  for (std::size_t i = 0; i < kEntries; ++i) {
    m.grads[i] = std::sin(static_cast<float>(i * static_cast<std::size_t>(comm.rank() + 1)));
  }
  comm.barrier();
  arrive(comm.rank());
  algorithm->synchronize_gradients(m.grads);
  m.stats = algorithm->stats();
  return m;
}

class BarrierBeforeCommunicate : public ::testing::TestWithParam<std::string> {};

TEST_P(BarrierBeforeCommunicate, TheWaitForTheSlowestRankIsWaitNotCommunication) {
  const Measured without = exchange_once(GetParam(), false);
  const Measured with = exchange_once(GetParam(), true);
  EXPECT_EQ(with.grads, without.grads);
  EXPECT_EQ(with.stats.bytes_sent, without.stats.bytes_sent);
  EXPECT_EQ(without.stats.wait_seconds, 0);
  if (with.rank == 0) return;  // the late rank itself waits for no one
  EXPECT_GT(without.stats.communicate_seconds, kLateSeconds / 2);
  EXPECT_GT(with.stats.wait_seconds, kLateSeconds / 2);
  EXPECT_LT(with.stats.communicate_seconds, with.stats.wait_seconds);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, BarrierBeforeCommunicate,
                         ::testing::Values("dense", "topk", "gtopk", "gaussiank", "signsgd",
                                           "ef-signsgd", "qsgd", "powersgd"));

// sgp and dpsgd mix the parameters after the step, in a round the training thread waits for: all
// of it is wait, and without the barrier the wait for the slowest rank is communication too.
Measured mix_once(const std::string& algo, bool barrier) {
  comm::MpiCommunicator comm;
  AlgorithmConfig config;
  config.algo = algo;
  config.topology = "ring";  // any P; dpsgd's default pairs the ranks
  config.barrier_before_communicate = barrier;
  const std::unique_ptr<Algorithm> algorithm = make_algorithm(config, comm);
  Measured m;
  m.rank = comm.rank();
  m.grads.assign(kEntries, static_cast<float>(comm.rank() + 1));  // the parameters here
  comm.barrier();
  arrive(comm.rank());
  algorithm->before_step(m.grads);
  algorithm->after_step(m.grads);
  m.stats = algorithm->stats();
  return m;
}

class BarrierBeforeGossip : public ::testing::TestWithParam<std::string> {};

TEST_P(BarrierBeforeGossip, TheWaitForTheSlowestRankIsNotCommunication) {
  const Measured without = mix_once(GetParam(), false);
  const Measured with = mix_once(GetParam(), true);
  EXPECT_EQ(with.grads, without.grads);
  EXPECT_EQ(with.stats.bytes_sent, without.stats.bytes_sent);
  EXPECT_EQ(without.stats.wait_seconds, 0) << "an exchange counted once, as communication";
  if (with.rank == 0) return;  // the late rank itself waits for no one
  EXPECT_GT(without.stats.communicate_seconds, kLateSeconds / 2);
  EXPECT_GT(with.stats.wait_seconds, kLateSeconds / 2);
  EXPECT_LT(with.stats.communicate_seconds, kLateSeconds / 2);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, BarrierBeforeGossip, ::testing::Values("sgp", "dpsgd"));

// Where communication runs on a thread of its own, there is no exchange on the training thread
// to wait before.
TEST(BarrierBeforeCommunicate, DenseWithBucketsOsgpAndAdpsgdRejectIt) {
  comm::MpiCommunicator comm;
  AlgorithmConfig config;
  config.barrier_before_communicate = true;
  EXPECT_THROW(make_algorithm(config, comm), std::invalid_argument);
  for (const char* algo : {"osgp", "adpsgd"}) {
    config.algo = algo;
    EXPECT_THROW(make_algorithm(config, comm), std::invalid_argument) << algo;
  }
}

}  // namespace
}  // namespace commsgd::algorithms
