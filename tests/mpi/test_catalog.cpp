// Every row of the algorithm table builds (P = 4, what every topology allows), takes its
// defaults, and refuses the options of the other families; the table's names are unique. Every
// row of the tables the algorithms build from (selectors, aggregations, topologies) builds too.
#include <gtest/gtest.h>

#include <set>
#include <string>

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
      EXPECT_NE(make_selector(resolved.selector, 1, 0), nullptr);
      EXPECT_NE(make_aggregation(resolved.aggregation, comm), nullptr);
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

TEST(ExtensionTables, EveryRowOfTheAlgorithmsPartsBuilds) {
  comm::MpiCommunicator comm;
  for (const SelectorRow& row : selector_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    EXPECT_NE(make_selector(std::string(row.name), 7, comm.rank()), nullptr) << row.name;
  }
  for (const AggregationRow& row : aggregation_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    EXPECT_NE(make_aggregation(std::string(row.name), comm), nullptr) << row.name;
  }
  for (const TopologyRow& row : topology_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
    EXPECT_NE(make_topology(std::string(row.name), comm.size(), 1), nullptr) << row.name;
  }
  try {
    make_aggregation("allreduce", comm);
    ADD_FAILURE() << "an unknown aggregation was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--aggregation: unknown aggregation 'allreduce' (allgather or gtopk)");
  }
}

}  // namespace
}  // namespace commsgd::algorithms
