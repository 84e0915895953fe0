// Multi-rank tests of the sparse family, run under mpirun for every P from 1 to 8: the
// conservation law and bit-identical updates for every selector × aggregation, and gTop-k's
// message counts. Every rank runs every test; checks never skip a collective, so a failed
// expectation cannot leave a peer waiting.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/sparse/gtopk_aggregation.hpp"
#include "algorithms/sparse/sparse_sgd.hpp"

namespace commsgd::algorithms {
namespace {

constexpr std::size_t kD = 5003;  // odd, not a multiple of any vector width
constexpr double kDensity = 0.01;
constexpr std::size_t kK = 51;  // ceil(0.01 · 5003)

struct Rank {
  int rank = 0, size = 1;
};

Rank me() {
  Rank r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  return r;
}

// Gradient-like data with the cases that break bookkeeping: values tied within a rank (a small
// set of magnitudes), indices every rank selects (shared large entries, equal across ranks), and
// rank-specific large entries.
std::vector<float> planted(int rank, unsigned step) {
  std::mt19937 rng(1000 * step + static_cast<unsigned>(rank));
  std::normal_distribution<float> normal;
  std::vector<float> g(kD);
  for (float& x : g) x = normal(rng);
  const float ties[] = {-1.5f, 1.5f, 0.75f, -0.75f};
  for (std::size_t i = 0; i < kD; i += 5) g[i] = ties[(i / 5) % 4];
  for (std::size_t i = 17; i < kD; i += 331) g[i] = 6.0f;  // shared by every rank
  for (int j = 0; j < 8; ++j) g[(101 * (rank + 1) + 37 * j) % kD] = 5.0f + 0.1f * j;
  return g;
}

std::vector<float> allgather(const std::vector<float>& mine, int size) {
  std::vector<float> all(mine.size() * static_cast<std::size_t>(size));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(),
                static_cast<int>(mine.size()), MPI_FLOAT, MPI_COMM_WORLD);
  return all;
}

AlgorithmConfig sparse_config(const std::string& selector, const std::string& aggregation) {
  AlgorithmConfig config;
  config.algo = "topk";
  config.selector = selector;
  config.aggregation = aggregation;
  config.density = kDensity;
  return config;
}

struct Combo {
  std::string selector, aggregation;
};

class SparseMpi : public ::testing::TestWithParam<Combo> {};

TEST_P(SparseMpi, ConservationAndBitIdenticalUpdatesOverSteps) {
  const Rank r = me();
  comm::MpiCommunicator comm;
  const AlgorithmConfig config = sparse_config(GetParam().selector, GetParam().aggregation);
  SparseSgd algorithm(config, comm);

  std::vector<float> residual(kD, 0.0f);
  for (unsigned step = 0; step < 3; ++step) {
    std::vector<float> grads = planted(r.rank, step);
    std::vector<float> acc(kD);
    for (std::size_t j = 0; j < kD; ++j) acc[j] = grads[j] + residual[j];

    const AlgorithmStats before = algorithm.stats();
    algorithm.synchronize_gradients(grads);
    residual.assign(algorithm.residual().begin(), algorithm.residual().end());
    const std::uint64_t sent = algorithm.stats().entries_sent - before.entries_sent;
    // Threshold selectors may select nothing on this tie-heavy data (the Gaussian refinement
    // can overshoot both ways); exact and random always send k.
    const bool sends_k = config.selector == "exact" || config.selector == "random";
    if (sends_k) {
      EXPECT_EQ(sent, kK);
    }

    const std::vector<float> all_acc = allgather(acc, r.size);
    const std::vector<float> all_residual = allgather(residual, r.size);
    const std::vector<float> all_grads = allgather(grads, r.size);
    int mismatched_ranks = 0;
    for (int q = 1; q < r.size; ++q) {
      mismatched_ranks +=
          std::memcmp(all_grads.data(), all_grads.data() + q * kD, kD * sizeof(float)) != 0;
    }
    EXPECT_EQ(mismatched_ranks, 0) << "step " << step << ": the update differs between ranks";

    // Σ_r acc_r = U + Σ_r e_r', with U = P · grads, up to float rounding.
    int violations = 0;
    std::size_t nonzero = 0;
    for (std::size_t j = 0; j < kD; ++j) {
      double lhs = 0, rhs = r.size * static_cast<double>(grads[j]), magnitude = 0;
      for (int q = 0; q < r.size; ++q) {
        lhs += all_acc[q * kD + j];
        rhs += all_residual[q * kD + j];
        magnitude += std::abs(all_acc[q * kD + j]);
      }
      if (std::abs(lhs - rhs) > 1e-5 * magnitude + 1e-30) ++violations;
      nonzero += grads[j] != 0.0f;
    }
    EXPECT_EQ(violations, 0) << "step " << step;
    if (sends_k) {
      EXPECT_GT(nonzero, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, SparseMpi,
                         ::testing::Values(Combo{"exact", "allgather"}, Combo{"exact", "gtopk"},
                                           Combo{"gaussian", "allgather"},
                                           Combo{"gaussian", "gtopk"}, Combo{"dgc", "allgather"},
                                           Combo{"dgc", "gtopk"}, Combo{"random", "allgather"},
                                           Combo{"random", "gtopk"}),
                         [](const auto& info) {
                           return info.param.selector + "_" + info.param.aggregation;
                         });

// --norm-study-every: rank 0 measures how far the applied update u lands from the dense mean x of
// the ranks' g + e (computed here from every rank's acc), keeps k random entries of x for
// random-k's distance, and the bound (1 - k/d)||x||; measuring changes nothing the algorithm does.
// At density 1 every entry is applied, so all three distances vanish.
TEST(NormStudyMpi, MeasuresTheUpdatesDistanceToTheDenseMeanWithoutChangingIt) {
  const Rank r = me();
  comm::MpiCommunicator comm;
  for (const char* aggregation : {"allgather", "gtopk"}) {
    for (const double density : {kDensity, 1.0}) {
      AlgorithmConfig config = sparse_config("exact", aggregation);
      config.density = density;
      SparseSgd plain(config, comm);
      config.norm_study_every = 2;
      SparseSgd studied(config, comm);
      std::vector<float> residual(kD, 0.0f);
      for (unsigned step = 0; step < 3; ++step) {
        const std::string what = std::string(aggregation) + " density " + std::to_string(density) +
                                 " step " + std::to_string(step);
        std::vector<float> grads = planted(r.rank, step), reference = grads;
        std::vector<float> acc(kD);
        for (std::size_t j = 0; j < kD; ++j) acc[j] = grads[j] + residual[j];
        const std::uint64_t sent_before = studied.stats().entries_sent;
        studied.synchronize_gradients(grads);
        plain.synchronize_gradients(reference);
        residual.assign(studied.residual().begin(), studied.residual().end());
        EXPECT_EQ(grads, reference) << what;
        EXPECT_TRUE(std::equal(residual.begin(), residual.end(), plain.residual().begin())) << what;

        const std::vector<float> all_acc = allgather(acc, r.size);
        const std::optional<NormStudy> study = studied.take_norm_study();
        if (r.rank != 0 || step % 2 == 1) {
          EXPECT_FALSE(study.has_value()) << what;
          continue;
        }
        ASSERT_TRUE(study.has_value()) << what;
        double x_squared = 0, distance_squared = 0;
        std::vector<double> x(kD);
        for (std::size_t j = 0; j < kD; ++j) {
          for (int q = 0; q < r.size; ++q) x[j] += all_acc[q * kD + j];
          x[j] /= r.size;
          x_squared += x[j] * x[j];
          distance_squared += (x[j] - grads[j]) * (x[j] - grads[j]);
        }
        const double norm = std::sqrt(x_squared);
        const double k = static_cast<double>(studied.stats().entries_sent - sent_before);
        EXPECT_NEAR(study->dense_norm, norm, 1e-5 * norm) << what;
        EXPECT_NEAR(study->selected_distance, std::sqrt(distance_squared), 1e-5 * norm) << what;
        EXPECT_NEAR(study->bound, (1 - k / kD) * norm, 1e-5 * norm) << what;
        if (density == 1.0) {
          EXPECT_LT(study->selected_distance, 1e-6 * norm) << what;
          EXPECT_EQ(study->randk_distance, 0.0) << what;
        } else {
          // k random entries of x leave out close to (1 - k/d) of its energy, the largest far less.
          EXPECT_GT(study->randk_distance, std::sqrt(1 - 3 * k / kD) * norm) << what;
          EXPECT_LT(study->randk_distance, norm) << what;
          EXPECT_LT(study->selected_distance, study->randk_distance) << what;
        }
      }
      // Measuring is timed apart, so that the trainer leaves it out of the iteration's time.
      EXPECT_GT(studied.stats().measure_seconds, 0.0);
      EXPECT_EQ(plain.stats().measure_seconds, 0.0);
    }
  }
}

// When every rank proposes the same k indices, gTop-k's U is the exact top-k of the sum, and
// every proposal is applied.
TEST(GtopkMpi, SameSetsGiveTheExactTopKOfTheSum) {
  const Rank r = me();
  comm::MpiCommunicator comm;
  SparseSgd algorithm(sparse_config("exact", "gtopk"), comm);

  std::vector<float> grads = planted(r.rank, 7);
  for (float& x : grads) x = std::clamp(x, -1.0f, 1.0f);
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < kK; ++i) chosen.push_back(3 + 97 * i);
  for (std::size_t i = 0; i < kK; ++i)
    grads[chosen[i]] = (i % 2 ? -1.0f : 1.0f) * (2.0f + r.rank + 0.01f * i);
  const std::vector<float> all_acc = allgather(grads, r.size);

  algorithm.synchronize_gradients(grads);
  for (std::size_t j = 0; j < kD; ++j) {
    double sum = 0;
    for (int q = 0; q < r.size; ++q) sum += all_acc[q * kD + j];
    const bool in_set = std::binary_search(chosen.begin(), chosen.end(), j);
    if (in_set) {
      EXPECT_NEAR(r.size * grads[j], sum, 1e-4 * std::abs(sum)) << j;
    } else {
      EXPECT_EQ(grads[j], 0.0f) << j;
    }
  }
  for (const float e : algorithm.residual())
    EXPECT_LE(std::abs(e), 1.0f) << "applied entries leave the residual";
}

// The cost model (docs/design.md, "Sparse family"): log2 P exchanges of 8k bytes; for other P the
// butterfly's ⌊log2 P⌋ rounds plus one fold-in and one fold-out message for each extra rank and its
// partner. Sets this small travel packed, one message a round.
TEST(GtopkMpi, MessageCountsAndSizesFollowTheButterfly) {
  const Rank r = me();
  comm::MpiCommunicator comm;
  SparseSgd algorithm(sparse_config("exact", "gtopk"), comm);
  std::vector<float> grads = planted(r.rank, 3);

  const comm::CommCounters before = comm.counters();
  algorithm.synchronize_gradients(grads);
  const comm::CommCounters after = comm.counters();
  const std::uint64_t sent = after.messages_sent - before.messages_sent;
  const std::uint64_t received = after.messages_received - before.messages_received;
  const std::uint64_t bytes_sent = after.bytes_sent - before.bytes_sent;
  const std::uint64_t bytes_received = after.bytes_received - before.bytes_received;

  const int group = static_cast<int>(std::bit_floor(static_cast<unsigned>(r.size)));
  const std::uint64_t rounds =
      static_cast<std::uint64_t>(std::countr_zero(static_cast<unsigned>(group)));
  const std::uint64_t message = 8 * kK;
  if (r.rank >= group) {  // extra rank: fold in, fold out (U plus a byte of mask per entry)
    EXPECT_EQ(sent, 1u);
    EXPECT_EQ(received, 1u);
    EXPECT_EQ(bytes_sent, message);
    EXPECT_EQ(bytes_received, message + kK);
  } else if (r.rank + group < r.size) {  // partner of an extra rank
    EXPECT_EQ(sent, rounds + 1);
    EXPECT_EQ(received, rounds + 1);
    EXPECT_EQ(bytes_sent, rounds * message + message + kK);
    EXPECT_EQ(bytes_received, (rounds + 1) * message);
  } else {
    EXPECT_EQ(sent, rounds);
    EXPECT_EQ(received, rounds);
    EXPECT_EQ(bytes_sent, rounds * message);
    EXPECT_EQ(bytes_received, rounds * message);
  }
}

// A round's set travels packed in one message, or as its values and indices in two from where
// the set holds them (GtopkAggregation::kPartsFromBytes). Both ways give the same U, bit for bit,
// and the same survival masks, on sets of 20 000 entries (k of 10^6, some indices shared between
// ranks); only the messages differ, two a butterfly round instead of one.
TEST(GtopkMpi, SetsSentInPartsGiveTheSameUAsPackedSets) {
  const Rank r = me();
  comm::MpiCommunicator comm;
  constexpr std::size_t d = 1'000'000, k = 20'000, stride = d / k;
  std::mt19937 rng(static_cast<unsigned>(r.rank) + 1);
  std::normal_distribution<float> normal;
  kernels::SparseSet local;
  for (std::size_t j = 0; j < k; ++j) {  // one index in each stride: sorted, random, distinct
    local.indices.push_back(static_cast<std::uint32_t>(j * stride + rng() % stride));
    local.values.push_back(normal(rng));
  }
  GtopkAggregation packed(comm, std::numeric_limits<std::size_t>::max()), in_parts(comm, 0);
  std::vector<std::uint8_t> applied_packed, applied_in_parts;
  std::vector<float> u_packed(d), u_in_parts(d);

  const comm::CommCounters start = comm.counters();
  packed.exchange(local, k, applied_packed);
  const comm::CommCounters middle = comm.counters();
  in_parts.exchange(local, k, applied_in_parts);
  const comm::CommCounters end = comm.counters();
  packed.write_update(u_packed);
  in_parts.write_update(u_in_parts);

  EXPECT_EQ(std::memcmp(u_packed.data(), u_in_parts.data(), d * sizeof(float)), 0);
  EXPECT_EQ(applied_packed, applied_in_parts);
  EXPECT_EQ(std::count_if(u_packed.begin(), u_packed.end(), [](float x) { return x != 0.0f; }),
            static_cast<std::ptrdiff_t>(k))
      << "U holds k entries";
  const int group = static_cast<int>(std::bit_floor(static_cast<unsigned>(r.size)));
  const std::uint64_t rounds =
      r.rank < group ? static_cast<std::uint64_t>(std::countr_zero(static_cast<unsigned>(group)))
                     : 0;
  EXPECT_EQ(end.messages_sent - middle.messages_sent,
            middle.messages_sent - start.messages_sent + rounds);
  EXPECT_EQ(end.bytes_sent - middle.bytes_sent, middle.bytes_sent - start.bytes_sent);
}

}  // namespace
}  // namespace commsgd::algorithms
