// Multi-rank tests of the compressed family (signsgd, ef-signsgd, qsgd; powersgd's norm study;
// its factors against LibTorch's are in test_powersgd.cpp), run under mpirun for P =
// 2, 3 and 4: each update against one computed here from every rank's gradient, the bytes each step
// moves against the formula, and the error feedback's state through a checkpoint. Every rank
// regenerates every rank's gradient from its seed, so the references need no communication;
// checks never skip a collective, so a failed expectation cannot leave a peer waiting.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/compressed/ef_signsgd.hpp"
#include "algorithms/compressed/powersgd.hpp"
#include "algorithms/compressed/qsgd.hpp"
#include "algorithms/compressed/signsgd.hpp"
#include "kernels/qsgd.hpp"

namespace commsgd::algorithms {
namespace {

constexpr std::size_t kD = 5003;  // not a multiple of 64: the last word of signs is partial

// Three tensors of kD entries in all: a matrix, a vector, and one that starts inside a word.
const std::vector<ParameterLayout> kLayout = {{0, {40, 30}}, {1200, {30}}, {1230, {3773}}};

std::vector<float> gradient(int rank, int step) {
  std::mt19937 rng(100 * static_cast<unsigned>(step) + static_cast<unsigned>(rank));
  std::normal_distribution<float> normal;
  std::vector<float> g(kD);
  for (float& x : g) x = normal(rng);
  // Entries where the ranks split evenly (ties of the vote at even P): rank r's sign alternates.
  for (std::size_t i = 0; i < kD; i += 97) g[i] = rank % 2 == 0 ? 1.0f : -1.0f;
  return g;
}

std::uint64_t words_of_signs() {
  return (kD + 63) / 64;
}

TEST(SignSgd, TheUpdateIsTheMajorityVoteOfTheRanksSigns) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  SignSgd algorithm(comm, AlgorithmConfig{});
  for (int step = 0; step < 2; ++step) {
    std::vector<float> g = gradient(comm.rank(), step);
    algorithm.synchronize_gradients(g);
    std::vector<int> votes(kD, 0);
    for (int r = 0; r < p; ++r) {
      const std::vector<float> theirs = gradient(r, step);
      for (std::size_t i = 0; i < kD; ++i) votes[i] += theirs[i] < 0.0f ? -1 : 1;
    }
    std::size_t wrong = 0, ties = 0;
    for (std::size_t i = 0; i < kD; ++i) {
      const float expected = static_cast<float>((votes[i] > 0) - (votes[i] < 0));
      wrong += g[i] != expected;
      ties += votes[i] == 0;
    }
    EXPECT_EQ(wrong, 0u) << "step " << step;
    if (p % 2 == 0) {
      EXPECT_GT(ties, 0u) << "the planted ties voted 0";
    }
  }
  // Every step, the signs of P − 1 other ranks in and this rank's out to them (as a ring
  // allgather moves them).
  const std::uint64_t per_step = static_cast<std::uint64_t>(p - 1) * 8 * words_of_signs();
  EXPECT_EQ(algorithm.stats().bytes_sent, 2 * per_step);
  EXPECT_EQ(algorithm.stats().bytes_received, 2 * per_step);
}

// One rank's EF-signSGD step as the paper writes it, in the kernels' float arithmetic: the
// compressed step Δ (its signs and a scale per tensor), and the error left.
struct Compressed {
  std::vector<bool> negative;
  std::vector<float> scales;
};

Compressed compress(std::vector<float>& error, const std::vector<float>& g) {
  Compressed c;
  for (std::size_t i = 0; i < kD; ++i) error[i] += g[i];  // p = g + e
  for (const ParameterLayout& t : kLayout) {
    double l1 = 0;
    for (std::size_t i = t.offset; i < t.offset + t.entries(); ++i) l1 += std::fabs(error[i]);
    c.scales.push_back(static_cast<float>(l1 / static_cast<double>(t.entries())));
  }
  for (std::size_t t = 0; t < kLayout.size(); ++t) {
    for (std::size_t i = kLayout[t].offset; i < kLayout[t].offset + kLayout[t].entries(); ++i) {
      c.negative.push_back(error[i] < 0.0f);
      error[i] += c.negative.back() ? c.scales[t] : -c.scales[t];  // e = p − Δ
    }
  }
  return c;
}

TEST(EfSignSgd, TheUpdateIsTheMeanOfTheRanksScaledSignsWithTheirErrorsFedBack) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  EfSignSgd algorithm(comm, AlgorithmConfig{});
  algorithm.set_layout(kLayout);
  std::vector<std::vector<float>> errors(static_cast<std::size_t>(p), std::vector<float>(kD, 0));
  const float share = 1.0f / static_cast<float>(p);
  for (int step = 0; step < 3; ++step) {
    std::vector<float> g = gradient(comm.rank(), step);
    algorithm.synchronize_gradients(g);
    std::vector<float> expected(kD, 0.0f);
    for (int r = 0; r < p; ++r) {
      const Compressed c = compress(errors[static_cast<std::size_t>(r)], gradient(r, step));
      for (std::size_t t = 0; t < kLayout.size(); ++t) {
        for (std::size_t i = kLayout[t].offset; i < kLayout[t].offset + kLayout[t].entries();
             ++i) {
          expected[i] += c.negative[i] ? -(c.scales[t] * share) : c.scales[t] * share;
        }
      }
    }
    double worst = 0;
    for (std::size_t i = 0; i < kD; ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(g[i]) - expected[i]) /
                                  std::max(1e-6, std::fabs(static_cast<double>(expected[i]))));
    }
    // The scales' sums of |p| are taken in another order here than in the kernel: equal to
    // float rounding.
    EXPECT_LT(worst, 1e-5) << "step " << step << ": worst relative difference";
  }
  // A block of signs and the three scales two to a word, to and from P − 1 ranks, each step.
  const std::uint64_t per_step = static_cast<std::uint64_t>(p - 1) * 8 * (words_of_signs() + 2);
  EXPECT_EQ(algorithm.stats().bytes_sent, 3 * per_step);
  EXPECT_EQ(algorithm.stats().bytes_received, 3 * per_step);
}

TEST(EfSignSgd, ResumedFromItsStateTheNextStepIsTheSameBitForBit) {
  comm::MpiCommunicator comm;
  EfSignSgd running(comm, AlgorithmConfig{});
  running.set_layout(kLayout);
  std::vector<float> g = gradient(comm.rank(), 0);
  running.synchronize_gradients(g);
  StateWriter state;
  running.save_state(state);

  EfSignSgd resumed(comm, AlgorithmConfig{});
  resumed.set_layout(kLayout);
  StateReader reader(state.bytes());
  resumed.load_state(reader);
  EXPECT_TRUE(reader.done());

  std::vector<float> next = gradient(comm.rank(), 1);
  std::vector<float> next_resumed = next;
  running.synchronize_gradients(next);
  resumed.synchronize_gradients(next_resumed);
  EXPECT_EQ(next, next_resumed);

  EfSignSgd other_model(comm, AlgorithmConfig{});
  other_model.set_layout(std::vector<ParameterLayout>{{0, {10}}});
  StateReader wrong(state.bytes());
  EXPECT_THROW(other_model.load_state(wrong), std::runtime_error);
}

TEST(EfSignSgd, RefusesALayoutWithAGap) {
  comm::MpiCommunicator comm;
  EfSignSgd algorithm(comm, AlgorithmConfig{});
  EXPECT_THROW(algorithm.set_layout(std::vector<ParameterLayout>{{0, {10}}, {12, {4}}}),
               std::logic_error);
}

// QSGD's update is the mean of every rank's decoded code, each drawn with the key of its rank and
// step under the run's seed: computed here with the same kernels, in the same order, it is equal
// bit for bit. Buckets of 500 entries: the last of kD's is 3 entries long.
TEST(Qsgd, TheUpdateIsTheMeanOfTheRanksDecodedCodes) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  AlgorithmConfig config;
  config.qsgd_levels = 4;
  config.qsgd_bucket = 500;
  config.seed = 7;
  Qsgd algorithm(comm, config);
  const float share = 1.0f / static_cast<float>(p);
  constexpr std::size_t kBuckets = (kD + 499) / 500;
  for (int step = 0; step < 3; ++step) {
    std::vector<float> g = gradient(comm.rank(), step);
    algorithm.synchronize_gradients(g);
    std::vector<float> expected(kD, 0.0f);
    for (int r = 0; r < p; ++r) {
      const std::vector<float> theirs = gradient(r, step);
      const std::uint64_t key = kernels::qsgd_key(7, static_cast<std::uint64_t>(step * p + r));
      for (std::size_t b = 0; b < kBuckets; ++b) {
        const std::size_t n = std::min<std::size_t>(500, kD - b * 500);
        std::vector<std::uint64_t> code(kernels::qsgd_words(n, 4));
        const float norm =
            kernels::qsgd_encode(std::span(theirs).subspan(b * 500, n), 4, key, b * 500, code);
        kernels::qsgd_decode_add(code, 4, norm, share, std::span(expected).subspan(b * 500, n));
      }
    }
    EXPECT_EQ(g, expected) << "step " << step;
  }
  // Each rank's block: 32 words of codes a whole bucket (16 to a word), 1 for the last, and the
  // 11 norms two to a word; to and from P − 1 ranks each step.
  const std::uint64_t block = 8 * ((kBuckets - 1) * 32 + 1) + 8 * ((kBuckets + 1) / 2);
  const std::uint64_t per_step = static_cast<std::uint64_t>(p - 1) * block;
  EXPECT_EQ(algorithm.stats().bytes_sent, 3 * per_step);
  EXPECT_EQ(algorithm.stats().bytes_received, 3 * per_step);
}

// The step count keys the draws: resumed from it, the next step draws what the run never stopped
// draws.
TEST(Qsgd, ResumedFromItsStateTheNextStepIsTheSameBitForBit) {
  comm::MpiCommunicator comm;
  Qsgd running(comm, AlgorithmConfig{});
  std::vector<float> g = gradient(comm.rank(), 0);
  running.synchronize_gradients(g);
  StateWriter state;
  running.save_state(state);
  Qsgd resumed(comm, AlgorithmConfig{});
  StateReader reader(state.bytes());
  resumed.load_state(reader);
  EXPECT_TRUE(reader.done());
  std::vector<float> next = gradient(comm.rank(), 1), next_resumed = next;
  running.synchronize_gradients(next);
  resumed.synchronize_gradients(next_resumed);
  EXPECT_EQ(next, next_resumed);
}

// --norm-study-every for the compressed algorithms whose update is in gradient units: rank 0
// measures how far the update lands from the dense mean x of the ranks' g + e, beside random-k of
// x with as many 8-byte (index, value) pairs as the bytes a rank puts into the exchange; measuring
// changes nothing the algorithm does. At step 0 every error is zero, so x is the mean gradient,
// computed here. powersgd's first step, before --powersgd-start-iter, allreduces the gradient as
// it is: its update is x exactly.
TEST(CompressedNormStudy, MeasuresTheUpdateAgainstTheDenseMeanWithEqualBytesRandomK) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  constexpr std::size_t kBuckets = (kD + 499) / 500;
  struct Case {
    std::string name;
    std::function<std::unique_ptr<Algorithm>(const AlgorithmConfig&)> make;
    // The bytes a rank puts into the exchange at `step`, for the algorithm as made.
    std::function<std::size_t(const Algorithm&, int step)> payload;
  };
  const std::vector<Case> cases = {
      {"ef-signsgd",
       [&](const AlgorithmConfig& c) -> std::unique_ptr<Algorithm> {
         return std::make_unique<EfSignSgd>(comm, c);
       },
       [](const Algorithm&, int) { return 8 * words_of_signs() + 8 * 2; }},  // 3 scales
      {"qsgd",
       [&](const AlgorithmConfig& c) -> std::unique_ptr<Algorithm> {
         return std::make_unique<Qsgd>(comm, c);
       },
       [](const Algorithm&, int) {
         return 8 * ((kBuckets - 1) * 32 + 1) + 8 * ((kBuckets + 1) / 2);
       }},
      {"powersgd",
       [&](const AlgorithmConfig& c) -> std::unique_ptr<Algorithm> {
         return std::make_unique<PowerSgd>(comm, c);
       },
       [](const Algorithm& a, int step) {
         return 4 * (step == 0 ? kD : dynamic_cast<const PowerSgd&>(a).compressed_entries());
       }},
  };
  for (const Case& c : cases) {
    AlgorithmConfig config;
    config.qsgd_levels = 4;
    config.qsgd_bucket = 500;
    config.powersgd_start_iter = 1;
    const std::unique_ptr<Algorithm> plain = c.make(config);
    config.norm_study_every = 2;
    const std::unique_ptr<Algorithm> studied = c.make(config);
    plain->set_layout(kLayout);
    studied->set_layout(kLayout);
    for (int step = 0; step < 3; ++step) {
      const std::string what = c.name + " step " + std::to_string(step);
      std::vector<float> g = gradient(comm.rank(), step), reference = g;
      studied->synchronize_gradients(g);
      plain->synchronize_gradients(reference);
      EXPECT_EQ(g, reference) << what;
      const std::optional<NormStudy> study = studied->take_norm_study();
      if (comm.rank() != 0 || step % 2 == 1) {
        EXPECT_FALSE(study.has_value()) << what;
        continue;
      }
      ASSERT_TRUE(study.has_value()) << what;
      const double k = static_cast<double>(c.payload(*studied, step) / 8);
      EXPECT_NEAR(study->bound / study->dense_norm, 1 - k / kD, 1e-9) << what;
      EXPECT_LE(study->randk_distance, study->dense_norm) << what;
      if (step != 0) continue;
      std::vector<double> x(kD, 0.0);
      for (int r = 0; r < p; ++r) {
        const std::vector<float> theirs = gradient(r, step);
        for (std::size_t j = 0; j < kD; ++j) x[j] += theirs[j];
      }
      double x_squared = 0, distance_squared = 0;
      for (std::size_t j = 0; j < kD; ++j) {
        x[j] /= p;
        x_squared += x[j] * x[j];
        distance_squared += (x[j] - g[j]) * (x[j] - g[j]);
      }
      const double norm = std::sqrt(x_squared);
      EXPECT_NEAR(study->dense_norm, norm, 1e-5 * norm) << what;
      EXPECT_NEAR(study->selected_distance, std::sqrt(distance_squared), 1e-5 * norm) << what;
      if (c.name == "powersgd") {
        EXPECT_EQ(study->selected_distance, 0.0) << "the same allreduce: " << what;
      } else {
        EXPECT_GT(study->selected_distance, 0.01 * norm) << what;
      }
    }
    EXPECT_GT(studied->stats().measure_bytes_sent, 0u) << c.name;
    EXPECT_EQ(studied->stats().bytes_sent, plain->stats().bytes_sent) << "apart: " << c.name;
  }
}

}  // namespace
}  // namespace commsgd::algorithms
