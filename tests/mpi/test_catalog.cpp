// Every row of the algorithm table builds (P = 4, what every topology allows), takes its
// defaults, and refuses the options of the other families; the table's names are unique. Every
// row of the tables the algorithms build from (selectors, aggregations, topologies) builds too.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "algorithms/baseline_algorithm.hpp"
#include "algorithms/catalog.hpp"
#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/gossip/topology.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/sparse/selector.hpp"

namespace commsgd::algorithms {
namespace {

TEST(AlgorithmTable, EveryRowBuildsWithItsDefaults) {
  comm::MpiCommunicator comm;
  std::set<std::string> names;
  for (const AlgorithmRow& row : algorithm_table()) {
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name << " twice";
    EXPECT_FALSE(row.summary.empty()) << row.name;
    AlgorithmConfig config;
    config.algo = row.name;
    const AlgorithmConfig resolved = resolve(config);
    EXPECT_EQ(resolved.selector, row.selector) << row.name;
    EXPECT_EQ(resolved.aggregation, row.aggregation) << row.name;
    EXPECT_EQ(resolved.topology, row.topology) << row.name;
    if (row.family == Family::sparse) {
      EXPECT_NE(make_selector(resolved, 0), nullptr);
      EXPECT_NE(make_aggregation(resolved, comm), nullptr);
    }
    if (row.family == Family::gossip) {
      EXPECT_NE(make_topology(resolved.topology, comm.size(), 1), nullptr);
    }
    EXPECT_NE(make_algorithm(config, comm), nullptr) << row.name;

    AlgorithmConfig foreign = config;
    if (row.family == Family::gossip) {
      foreign.selector = "exact";
    } else {
      foreign.topology = "ring";
    }
    EXPECT_THROW(resolve(foreign), std::invalid_argument) << row.name;
  }
  EXPECT_EQ(names.size(), algorithm_table().size());
  EXPECT_THROW(find_algorithm("no-such-algorithm"), std::invalid_argument);
  EXPECT_THROW(add_algorithm({.name = "dense",
                              .family = Family::dense,
                              .summary = "again",
                              .make = algorithm_table()[0].make}),
               std::invalid_argument);
}

// The record counts an algorithm's traffic at the communicator it was given, its engine's
// duplicate included (Communicator::traffic_with_duplicates); each row's own account must say the
// same, over iterations as the trainer drives them, its end of training included.
// The views' scaling baseline and the reports' speedup baseline are one algorithm, S-SGD.
TEST(AlgorithmTable, TheBaselineAlgorithmIsARowOfTheDenseFamily) {
  EXPECT_EQ(baseline_algorithm(), kBaselineAlgorithm);
  EXPECT_EQ(find_algorithm(kBaselineAlgorithm).family, Family::dense);
}

TEST(AlgorithmTable, EveryRowsOwnTrafficIsWhatItsCommunicatorCounted) {
  comm::MpiCommunicator comm;
  constexpr std::size_t kEntries = 3000;
  for (const AlgorithmRow& row : algorithm_table()) {
    SCOPED_TRACE(std::string(row.name));
    AlgorithmConfig config;
    config.algo = row.name;
    config.density = 0.01;
    if (row.family == Family::dense) config.bucket_bytes = 4000;  // buckets on the engine
    std::vector<float> params(kEntries), grads(kEntries);
    for (std::size_t i = 0; i < kEntries; ++i) {
      params[i] = static_cast<float>(i % 7) * 0.1f;
      grads[i] = static_cast<float>((i * 13 + static_cast<std::size_t>(comm.rank())) % 11) - 5;
    }
    const std::unique_ptr<Algorithm> algorithm = make_algorithm(config, comm);
    algorithm->set_layout(std::vector<ParameterLayout>{{0, {30, 50}}, {1500, {1500}}});
    const comm::Traffic before = comm.traffic_with_duplicates();
    algorithm->begin_training(params);
    algorithm->begin_epoch(0);
    for (long done = 0; algorithm->next_iteration(done, 3); ++done) {
      algorithm->synchronize_gradients(grads);
      algorithm->before_step(params);
      algorithm->after_step(params);
    }
    algorithm->end_training();
    const AlgorithmStats own = algorithm->stats();
    const comm::Traffic counted = comm.traffic_with_duplicates();
    EXPECT_EQ(own.bytes_sent, counted.bytes_sent - before.bytes_sent);
    EXPECT_EQ(own.bytes_received, counted.bytes_received - before.bytes_received);
    if (comm.size() > 1 && row.family != Family::gossip) {
      EXPECT_GT(own.bytes_sent, 0u);
    }
    comm.barrier();
  }
}

TEST(ExtensionTables, EveryRowOfTheAlgorithmsPartsBuilds) {
  comm::MpiCommunicator comm;
  for (const SelectorRow& row : selector_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    AlgorithmConfig config;
    config.selector = row.name;
    config.seed = 7;
    EXPECT_NE(make_selector(config, comm.rank()), nullptr) << row.name;
  }
  for (const AggregationRow& row : aggregation_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    AlgorithmConfig config;
    config.aggregation = row.name;
    EXPECT_NE(make_aggregation(config, comm), nullptr) << row.name;
  }
  for (const TopologyRow& row : topology_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    EXPECT_NE(make_topology(std::string(row.name), comm.size(), 1), nullptr) << row.name;
  }
  try {
    AlgorithmConfig config;
    config.aggregation = "allreduce";
    make_aggregation(config, comm);
    ADD_FAILURE() << "an unknown aggregation was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--aggregation: unknown aggregation 'allreduce' (allgather or gtopk)");
  }
}

}  // namespace
}  // namespace commsgd::algorithms
