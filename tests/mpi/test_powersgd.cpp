// PowerSGD under mpirun for P = 2, 3 and 4: a step's factors and update against a reference
// computed here with LibTorch's linear algebra (matmul, QR) from every rank's matrices and the
// same Q, the bytes each step moves against the formula, the uncompressed iterations before
// --powersgd-start-iter, and the state through a checkpoint. Every rank regenerates every rank's
// gradient from its seed, so the references need no communication; checks never skip a
// collective, so a failed expectation cannot leave a peer waiting.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/compressed/powersgd.hpp"

namespace commsgd::algorithms {
namespace {

// A weight matrix and a convolution (compressed at rank 2), a bias, and a 7 × 3 matrix too small
// to be worth it ((7 + 3)·2·2 ≥ 21): the rest, allreduced as it is.
const std::vector<ParameterLayout> kLayout = {
    {0, {40, 30}}, {1200, {30}}, {1230, {16, 3, 5, 5}}, {2430, {7, 3}}};
constexpr std::size_t kD = 2451;
struct Compressed {
  std::size_t offset, rows, cols;
};
const std::vector<Compressed> kMatrices = {{0, 40, 30}, {1230, 16, 75}};
const std::vector<std::pair<std::size_t, std::size_t>> kRest = {{1200, 30}, {2430, 21}};
constexpr int kRank = 2;

std::vector<float> gradient(int rank, int step) {
  std::mt19937 rng(1000 * static_cast<unsigned>(step) + static_cast<unsigned>(rank));
  std::normal_distribution<float> normal;
  std::vector<float> g(kD);
  for (float& x : g) x = normal(rng);
  return g;
}

AlgorithmConfig config(long start_iter = 0) {
  AlgorithmConfig c;
  c.algo = "powersgd";
  c.powersgd_rank = kRank;
  c.powersgd_start_iter = start_iter;
  return c;
}

torch::Tensor as_tensor(std::span<const float> x, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(x.data()), shape, torch::kFloat).to(torch::kDouble);
}

// A factor stored by columns (kernels/low_rank.hpp) as an n × r matrix.
torch::Tensor factor(std::span<const float> columns, std::size_t length) {
  return as_tensor(columns, {kRank, static_cast<std::int64_t>(length)}).t();
}

// The orthonormal basis QR gives, its columns' signs those of Gram–Schmidt (R's diagonal > 0).
torch::Tensor orthonormal(const torch::Tensor& a) {
  const auto [q, r] = torch::linalg_qr(a);
  return q * torch::sign(torch::diagonal(r)).unsqueeze(0);
}

double relative_error(const torch::Tensor& got, const torch::Tensor& expected) {
  return (got - expected).norm().item<double>() / expected.norm().item<double>();
}

TEST(PowerSgd, FactorsAndUpdateEqualLibTorchsOnTheSameMatricesAndQ) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  PowerSgd algorithm(comm, config());
  algorithm.set_layout(kLayout);

  // Step 0 from Q's first draw; the error each rank keeps is its M = g less the update.
  std::vector<float> update = gradient(comm.rank(), 0);
  algorithm.synchronize_gradients(update);
  std::vector<std::vector<float>> m(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const std::vector<float> g0 = gradient(r, 0), g1 = gradient(r, 1);
    for (std::size_t i = 0; i < kD; ++i) m[r].push_back(g1[i] + (g0[i] - update[i]));
  }
  const std::vector<float> warm_q = algorithm.q_factors();

  std::vector<float> g = gradient(comm.rank(), 1);
  algorithm.synchronize_gradients(g);

  const std::vector<float> ps = algorithm.p_factors(), qs = algorithm.q_factors();
  std::size_t p_at = 0, q_at = 0;
  for (const Compressed& x : kMatrices) {
    const auto n = static_cast<std::int64_t>(x.rows), cols = static_cast<std::int64_t>(x.cols);
    const torch::Tensor q0 =
        orthonormal(factor(std::span(warm_q).subspan(q_at, x.cols * kRank), x.cols));
    torch::Tensor sum_p = torch::zeros({n, kRank}, torch::kDouble);
    for (int r = 0; r < p; ++r) {
      sum_p += torch::matmul(
          as_tensor(std::span(m[r]).subspan(x.offset, x.rows * x.cols), {n, cols}), q0);
    }
    const torch::Tensor p_hat = orthonormal(sum_p);
    torch::Tensor q = torch::zeros({cols, kRank}, torch::kDouble);
    for (int r = 0; r < p; ++r) {
      q += torch::matmul(
          as_tensor(std::span(m[r]).subspan(x.offset, x.rows * x.cols), {n, cols}).t(), p_hat);
    }
    q /= p;
    const torch::Tensor approximation = torch::matmul(p_hat, q.t());

    EXPECT_LT(relative_error(factor(std::span(ps).subspan(p_at, x.rows * kRank), x.rows), p_hat),
              1e-4)
        << "P of the matrix at " << x.offset;
    EXPECT_LT(relative_error(factor(std::span(qs).subspan(q_at, x.cols * kRank), x.cols), q), 1e-4)
        << "Q of the matrix at " << x.offset;
    EXPECT_LT(relative_error(as_tensor(std::span(g).subspan(x.offset, x.rows * x.cols), {n, cols}),
                             approximation),
              1e-4)
        << "the update of the matrix at " << x.offset;
    p_at += x.rows * kRank;
    q_at += x.cols * kRank;
  }
  for (const auto& [offset, count] : kRest) {
    torch::Tensor mean = torch::zeros({static_cast<std::int64_t>(count)}, torch::kDouble);
    for (int r = 0; r < p; ++r)
      mean += as_tensor(std::span(m[r]).subspan(offset, count), {static_cast<std::int64_t>(count)});
    mean /= p;
    EXPECT_LT(relative_error(as_tensor(std::span(g).subspan(offset, count),
                                       {static_cast<std::int64_t>(count)}),
                             mean),
              1e-5)
        << "the rest at " << offset;
  }
}

// Two allreduces a compressed step, the rest and every P, then every Q; counted as a ring moves
// them (2(P − 1)/P of the buffer each way); before --powersgd-start-iter, the whole gradient.
TEST(PowerSgd, BytesPerStepEqualTheFormula) {
  comm::MpiCommunicator comm;
  const auto p = static_cast<std::uint64_t>(comm.size());
  PowerSgd algorithm(comm, config(2));
  algorithm.set_layout(kLayout);
  const auto ring = [p](std::uint64_t entries) { return 2 * (p - 1) * 4 * entries / p; };
  const std::uint64_t rest_and_p = 30 + 21 + (40 + 16) * kRank, q = (30 + 75) * kRank;
  EXPECT_EQ(algorithm.compressed_entries(), rest_and_p + q);
  for (int step = 0; step < 5; ++step) {
    std::vector<float> g = gradient(comm.rank(), step);
    algorithm.synchronize_gradients(g);
  }
  const std::uint64_t expected = 2 * ring(kD) + 3 * (ring(rest_and_p) + ring(q));
  EXPECT_EQ(algorithm.stats().bytes_sent, expected);
  EXPECT_EQ(algorithm.stats().bytes_received, expected);
}

TEST(PowerSgd, BeforeTheStartIterationTheUpdateIsTheMeanGradient) {
  comm::MpiCommunicator comm;
  const int p = comm.size();
  PowerSgd algorithm(comm, config(1));
  algorithm.set_layout(kLayout);
  std::vector<float> g = gradient(comm.rank(), 0);
  algorithm.synchronize_gradients(g);
  for (std::size_t i = 0; i < kD; ++i) {
    double mean = 0;
    for (int r = 0; r < p; ++r) mean += gradient(r, 0)[i];
    ASSERT_NEAR(g[i], mean / p, 1e-5) << "entry " << i;
  }
}

// Resumed from a checkpoint after step 1 (iteration, error and Q), steps 2 and 3 give the same
// bits as a run that never stopped; the start iteration falls between them.
TEST(PowerSgd, ResumesBitForBitFromItsState) {
  comm::MpiCommunicator comm;
  PowerSgd running(comm, config(1));
  running.set_layout(kLayout);
  StateWriter state;
  for (int step = 0; step < 2; ++step) {
    std::vector<float> g = gradient(comm.rank(), step);
    running.synchronize_gradients(g);
  }
  running.save_state(state);
  PowerSgd resumed(comm, config(1));
  resumed.set_layout(kLayout);
  StateReader in(state.bytes());
  resumed.load_state(in);
  EXPECT_TRUE(in.done());
  for (int step = 2; step < 4; ++step) {
    std::vector<float> a = gradient(comm.rank(), step), b = a;
    running.synchronize_gradients(a);
    resumed.synchronize_gradients(b);
    EXPECT_EQ(a, b) << "step " << step;
  }
}

TEST(PowerSgd, RefusesAModelWithNothingWorthCompressing) {
  comm::MpiCommunicator comm;
  PowerSgd vectors(comm, config());
  EXPECT_THROW(vectors.set_layout(std::vector<ParameterLayout>{{0, {100}}, {100, {7, 3}}}),
               std::invalid_argument);
  AlgorithmConfig too_high = config();
  too_high.powersgd_rank = 10;  // 40 × 30 allows 8: (40 + 30)·8·2 < 1200
  PowerSgd large(comm, too_high);
  EXPECT_THROW(large.set_layout(std::vector<ParameterLayout>{{0, {40, 30}}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::algorithms
