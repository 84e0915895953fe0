// The algorithms written for device buffers, each run twice on the same inputs: on a CUDA
// device's buffers (the communicator's staged back end, so ranks may share one GPU) and on host
// buffers. The same results, bit for bit where the arithmetic is the same, else close: Gaussian-k's
// threshold, QSGD's and EF-signSGD's norms and PowerSGD's products are sums in another order.
// Over the bus per step: O(k) bytes for the sparse family, not O(d); a few bytes a tensor or none
// for the compressed family. AD-PSGD, whose threads decide when pairs mix, is held to what timing
// does not change: the bits of its directed rounds, the sum its pairs keep. Where NCCL was built,
// AD-PSGD also runs over it, evaluated while its gossip goes on. Every rank skips alike without a
// CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "algorithms/catalog.hpp"
#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/comm/staged_backend.hpp"
#ifdef COMMSGD_WITH_NCCL
#include "algorithms/comm/nccl_backend.hpp"
#endif
#include "kernels/cuda/device_array.hpp"
#include "kernels/ops.hpp"
#include "tests/gpu/cuda_devices.hpp"

namespace commsgd::algorithms {
namespace {

using kernels::cuda::check;

struct Case {
  std::string algo;
  bool bitwise;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.algo;
}

constexpr std::size_t kD = 20'000;
constexpr double kDensity = 0.01;
constexpr int kSteps = 5;
// The model's tensors, for the algorithms that work tensor by tensor (ef-signsgd): kD entries.
const std::vector<ParameterLayout> kLayout = {
    {0, {100, 100}}, {10'000, {100, 99}}, {19'900, {100}}};

// Rank r's gradient at a step: the same on both runs.
std::vector<float> gradient(int rank, int step) {
  std::mt19937 rng(static_cast<unsigned>(1000 * rank + step));
  std::normal_distribution<float> normal;
  std::vector<float> g(kD);
  for (float& x : g) x = normal(rng);
  return g;
}

// Ranks whose communicator carries device buffers over MPI (the staged back end), each on a
// device of its node.
class DeviceRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = testing::no_cuda_device(comm_); !missing.empty()) {
      GTEST_SKIP() << missing;
    }
    int devices = 1;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check(cudaSetDevice(comm_.placement().local_rank % devices), "cudaSetDevice");
    comm_.attach_device_backend(std::make_unique<comm::StagedBackend>(comm_));
  }

  // Storage of n floats in `place`, set to `values` (zeros if empty).
  static kernels::ops::Storage<float> storage(std::size_t n, kernels::Place place,
                                              const std::vector<float>& values = {}) {
    kernels::ops::Storage<float> s;
    s.resize(n, place);
    if (values.empty()) {
      kernels::ops::fill_zero(s.buffer());
    } else {
      kernels::ops::copy_from_host(values, s.buffer());
    }
    return s;
  }

  comm::MpiCommunicator comm_;
};

class DeviceAlgorithms : public DeviceRanks, public ::testing::WithParamInterface<Case> {
 protected:
  // Runs kSteps of the trainer's order (synchronize, before_step, an SGD step, after_step) on
  // buffers in `place`, from parameters equal on every rank; returns the final parameters.
  std::vector<float> train(const AlgorithmConfig& config, kernels::Place place,
                           std::uint64_t& bus_bytes_per_step) {
    const std::unique_ptr<Algorithm> algorithm = make_algorithm(config, comm_);
    EXPECT_TRUE(algorithm->works_in(place.memory));
    algorithm->set_layout(kLayout);
    kernels::ops::Storage<float> params = storage(kD, place, gradient(-1, 0));
    kernels::ops::Storage<float> grads = storage(kD, place), momentum = storage(kD, place);
    algorithm->begin_training(params.buffer());
    std::uint64_t most = 0;
    for (int step = 0; step < kSteps; ++step) {
      kernels::ops::copy_from_host(gradient(comm_.rank(), step), grads.buffer());
      const std::uint64_t before = kernels::ops::bus_bytes();
      algorithm->synchronize_gradients(grads.buffer());
      most = std::max(most, kernels::ops::bus_bytes() - before);
      algorithm->before_step(params.buffer());
      kernels::ops::sgd_step(params.buffer(), grads.buffer(), momentum.buffer(),
                             {0.05f, 0.9f, 1e-4f, false});
      algorithm->after_step(params.buffer());
    }
    algorithm->end_training();
    bus_bytes_per_step = most;
    std::vector<float> result(kD);
    kernels::ops::copy_to_host(params.buffer(), result);
    return result;
  }
};

TEST_P(DeviceAlgorithms, MatchTheHostRunAndMoveLittleOverTheBus) {
  const Case& c = GetParam();
  AlgorithmConfig config;
  config.algo = c.algo;
  config.density = kDensity;
  config.bucket_bytes = 0;
  config.max_staleness = 0;  // osgp: each step absorbs its own exchange, whatever the timing
  // powersgd: compressing from the third step on.
  if (takes_option(find_algorithm(c.algo), "--powersgd-start-iter")) config.powersgd_start_iter = 2;
  std::uint64_t host_bus = 0, device_bus = 0;
  const std::vector<float> on_host = train(config, kernels::kHost, host_bus);
  const std::vector<float> on_device = train(config, kernels::cuda_place(nullptr), device_bus);

  EXPECT_EQ(host_bus, 0u) << "host buffers never cross the bus";
  double distance = 0, norm = 0;
  for (std::size_t i = 0; i < kD; ++i) {
    if (c.bitwise) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(on_device[i]),
                std::bit_cast<std::uint32_t>(on_host[i]))
          << "entry " << i;
    }
    distance += (on_device[i] - on_host[i]) * (on_device[i] - on_host[i]);
    norm += on_host[i] * on_host[i];
  }
  EXPECT_LE(std::sqrt(distance / norm), 1e-4);
  const std::size_t k = static_cast<std::size_t>(std::ceil(kDensity * kD));
  if (find_algorithm(c.algo).family == Family::sparse) {
    // The selection down, U's sets up (one per rank for allgather), the residual's bookkeeping
    // up: a few k entries of 8 bytes, for every P here; d floats would be 80 000 bytes.
    const auto p = static_cast<std::uint64_t>(comm_.size());
    EXPECT_LE(device_bus, (p + 3) * (9 * k + 4)) << "bytes over the bus in one step";
  }
  if (find_algorithm(c.algo).family == Family::compressed) {
    // Nothing, or a few bytes a tensor (EF-signSGD's norms and scales), or once PowerSGD's first
    // Q, drawn on the host: far less than the gradient's 4·kD bytes.
    EXPECT_LE(device_bus, 4 * kD / 10) << "bytes over the bus in one step";
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DeviceAlgorithms,
                         ::testing::Values(Case{"dense", true}, Case{"topk", true},
                                           Case{"gtopk", true}, Case{"gaussiank", false},
                                           Case{"dpsgd", true}, Case{"sgp", true},
                                           Case{"osgp", true}, Case{"signsgd", true},
                                           Case{"ef-signsgd", false}, Case{"qsgd", false},
                                           Case{"powersgd", false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.algo;  // a C identifier: ef_signsgd
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// AD-PSGD's gossip thread on a stream of its own, with nothing trained (the parameters handed
// back unchanged after each step), from a model that differs on every rank: returns the final
// parameters once every round has been absorbed.
std::vector<float> run_adpsgd(comm::Communicator& comm, bool directed, long iterations,
                              kernels::Place place) {
  AlgorithmConfig config;
  config.algo = "adpsgd";
  config.mixing = directed ? GossipMixing::directed : GossipMixing::symmetric;
  config.topology = directed ? "bipartite-exponential-two-sided" : "";
  const std::unique_ptr<Algorithm> adpsgd = make_algorithm(config, comm);
  EXPECT_TRUE(adpsgd->works_in(place.memory));
  kernels::ops::Storage<float> params;
  params.resize(kD, place);
  kernels::ops::copy_from_host(gradient(comm.rank(), 99), params.buffer());
  adpsgd->begin_training(params.buffer());
  for (long done = 0; adpsgd->next_iteration(done, iterations); ++done) {
    adpsgd->before_step(params.buffer());
    adpsgd->after_step(params.buffer());
  }
  adpsgd->end_training();
  adpsgd->after_step(params.buffer());  // picks up the last rounds
  std::vector<float> result(kD);
  kernels::ops::copy_to_host(params.buffer(), result);
  return result;
}

// Directed rounds are a fixed schedule of averages (x_r ← (x_r + x_{r−o_k})/2, one per planned
// iteration whoever trained it): on device buffers the same bits as on the host.
TEST_F(DeviceRanks, DirectedAdpsgdMixesLikeTheHostRunBitForBit) {
  if (comm_.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  const std::vector<float> on_host = run_adpsgd(comm_, true, 7, kernels::kHost);
  const std::vector<float> on_device = run_adpsgd(comm_, true, 7, kernels::cuda_place(nullptr));
  for (std::size_t i = 0; i < kD; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(on_device[i]), std::bit_cast<std::uint32_t>(on_host[i]))
        << "entry " << i;
  }
}

// Symmetric pairs run whenever the threads get to them, so only what every pairwise average
// keeps can be checked: the sum of the models over the ranks.
TEST_F(DeviceRanks, SymmetricAdpsgdKeepsTheSumOfTheModelsOnTheDevice) {
  if (comm_.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  const std::vector<float> start = gradient(comm_.rank(), 99);
  std::vector<double> before(start.begin(), start.end());
  const std::vector<float> mixed = run_adpsgd(comm_, false, 20, kernels::cuda_place(nullptr));
  std::vector<double> after(mixed.begin(), mixed.end());
  comm_.allreduce(std::span(before), comm::ReduceOp::sum);
  comm_.allreduce(std::span(after), comm::ReduceOp::sum);
  double distance = 0, norm = 0;
  for (std::size_t i = 0; i < kD; ++i) {
    distance += (after[i] - before[i]) * (after[i] - before[i]);
    norm += before[i] * before[i];
  }
  EXPECT_LE(std::sqrt(distance / norm), 1e-5);
}

#ifdef COMMSGD_WITH_NCCL
// AD-PSGD over NCCL, evaluated at each epoch's end while its gossip thread goes on exchanging on
// a communicator of its own: the consensus average must not put a second communicator's
// collective on the GPU beside the gossip's, which NCCL does not promise to progress (it goes
// through host memory). A hang ends in the NCCL back end's timeout, as a failure.
TEST(NcclRanks, SymmetricAdpsgdIsEvaluatedWhileItsGossipGoesOn) {
  comm::MpiCommunicator comm;
  if (const std::string missing = testing::no_gpu_per_rank(comm); !missing.empty()) {
    GTEST_SKIP() << missing;
  }
  if (comm.size() % 2 != 0) GTEST_SKIP() << "adpsgd needs an even number of ranks";
  int devices = 1;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check(cudaSetDevice(comm.placement().local_rank % devices), "cudaSetDevice");
  comm.attach_device_backend(std::make_unique<comm::NcclBackend>(comm));
  AlgorithmConfig config;
  config.algo = "adpsgd";
  const std::unique_ptr<Algorithm> adpsgd = make_algorithm(config, comm);
  kernels::ops::Storage<float> params;
  params.resize(kD, kernels::cuda_place(nullptr));
  kernels::ops::copy_from_host(gradient(comm.rank(), 99), params.buffer());
  adpsgd->begin_training(params.buffer());
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (long done = 0; adpsgd->next_iteration(done, 20); ++done) {
      adpsgd->before_step(params.buffer());
      adpsgd->after_step(params.buffer());
    }
    adpsgd->begin_evaluation(params.buffer(), false);
    ASSERT_TRUE(adpsgd->consensus_distance());
    EXPECT_TRUE(std::isfinite(*adpsgd->consensus_distance()));
    adpsgd->end_evaluation(params.buffer());
  }
  adpsgd->end_training();
}
#endif

}  // namespace
}  // namespace commsgd::algorithms
