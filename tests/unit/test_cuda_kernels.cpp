// kernels/cuda against the CPU kernels, which test_sparse_kernels checks against the definitions:
// the exact selector, threshold selection, the merge and the dense updates must give the CPU's
// bits; Gaussian-k sums its moments in another order, so its threshold may differ in the last
// bits and only entries that close to it may differ. Without a CUDA device these tests skip,
// saying so; the argument checks, which run before any device call, run everywhere.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/device_array.hpp"
#include "kernels/cuda/sampling.hpp"
#include "kernels/cuda/sparse_ops.hpp"
#include "kernels/cuda/threshold.hpp"
#include "kernels/cuda/topk.hpp"
#include "kernels/cuda/vector_ops.hpp"
#include "kernels/half_precision.hpp"
#include "kernels/ops.hpp"
#include "kernels/sampling.hpp"
#include "kernels/sgd.hpp"
#include "kernels/sparse_ops.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"
#include "kernels/vector_ops.hpp"
#include "tests/support/cuda_stream_test.hpp"

namespace commsgd::kernels {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> normal_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Few distinct magnitudes: long runs of equal keys, so the k-th key's ties span many tiles.
std::vector<float> tied_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 5);
  constexpr float kLevels[] = {0.0f, -0.5f, 0.5f, 1.0f, -2.0f, 2.0f};
  std::vector<float> v(n);
  for (float& x : v) x = kLevels[pick(rng)];
  return v;
}

// Bitwise, so that NaN values compare equal to themselves.
void expect_same_set(const SparseSet& cpu, const SparseSet& gpu, const std::string& what) {
  ASSERT_EQ(cpu.indices, gpu.indices) << what;
  ASSERT_EQ(cpu.values.size(), gpu.values.size()) << what;
  for (std::size_t i = 0; i < cpu.values.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(cpu.values[i]),
              std::bit_cast<std::uint32_t>(gpu.values[i]))
        << what << ": value " << i;
  }
}

using DeviceVector = testing::DeviceCopy<float>;

class CudaKernels : public testing::CudaStreamTest {
 protected:
  void TearDown() override {
    out_ = cuda::DeviceSparseSet{};
    CudaStreamTest::TearDown();
  }

  // Runs both selectors on x and expects the same set; returns the CPU's.
  template <class CpuSelector, class GpuSelector>
  SparseSet expect_cpu_selection(CpuSelector& cpu, GpuSelector& gpu, const std::vector<float>& x,
                                 std::size_t k, const std::string& what) {
    SparseSet expected;
    cpu.select(x, k, expected);
    DeviceVector dx(x, stream_);
    gpu.select(dx.data(), x.size(), k, out_, stream_);
    expect_same_set(expected, cuda::download(out_, stream_), what);
    return expected;
  }

  cuda::DeviceSparseSet out_;
};

// visit(x, k, what) for every n of `sizes`, normal and tied data, k in {1, n/1000, n/3 + 1, n}.
template <class Visit>
void for_each_selection_case(std::span<const std::size_t> sizes, Visit&& visit) {
  for (const std::size_t n : sizes) {
    for (const bool tied : {false, true}) {
      const std::vector<float> x = tied ? tied_vector(n, 7) : normal_vector(n, 11);
      for (const std::size_t k :
           {std::size_t{1}, std::max<std::size_t>(1, n / 1000), n / 3 + 1, n}) {
        visit(x, k,
              "n " + std::to_string(n) + " k " + std::to_string(k) + (tied ? " tied" : " normal"));
      }
    }
  }
}

TEST_F(CudaKernels, ExactTopkIsTheCpuSelection) {
  TopkSelector cpu;
  cuda::TopkSelector gpu;  // one selector throughout: its scratch is reused across sizes
  const std::size_t sizes[] = {1, 37, 4096, 4097, 1'000'003, 100};
  for_each_selection_case(sizes,
                          [&](const std::vector<float>& x, std::size_t k, const std::string& what) {
                            expect_cpu_selection(cpu, gpu, x, k, what);
                          });
}

// DGC's sample threshold lets all four non-finite entries and more pass, so it too keeps x's top 3.
TEST_F(CudaKernels, SelectionsRankNaNAndInfinityFirst) {
  std::vector<float> x = normal_vector(50'000, 3);
  x[49'999] = kNaN;
  x[10] = -kInf;
  x[20'000] = kInf;
  x[30'000] = -kNaN;
  TopkSelector cpu_exact;
  cuda::TopkSelector gpu_exact;
  DgcSelector cpu_dgc;
  cuda::DgcSelector gpu_dgc;
  // Both NaNs (one key, whatever the sign), then the first of the two infinities.
  const std::vector<std::uint32_t> top3{10, 30'000, 49'999};
  EXPECT_EQ(expect_cpu_selection(cpu_exact, gpu_exact, x, 3, "exact").indices, top3);
  EXPECT_EQ(expect_cpu_selection(cpu_dgc, gpu_dgc, x, 3, "dgc").indices, top3);
}

// Normal data keeps what passes the sample's threshold, often not exactly k entries; in tied data
// a third of the entries share the largest key, so for k < n/3 far more than 4k/3 pass and the
// device must fall back to x's top k as the CPU does.
TEST_F(CudaKernels, DgcIsTheCpuSelection) {
  DgcSelector cpu;
  cuda::DgcSelector gpu;
  int sample_threshold_kept = 0;  // selections of other than k entries
  const std::size_t sizes[] = {1, 999, 1000, 4097, 250'001, 1'000'003};
  for_each_selection_case(
      sizes, [&](const std::vector<float>& x, std::size_t k, const std::string& what) {
        sample_threshold_kept += expect_cpu_selection(cpu, gpu, x, k, what).size() != k;
      });
  EXPECT_GT(sample_threshold_kept, 0);
}

// Growing k between calls makes the selector reallocate the pinned memory its indices leave from.
TEST_F(CudaKernels, RandomIsTheCpuSelection) {
  RandomSelector cpu;
  cuda::RandomSelector gpu;
  cuda::DeviceSparseSet out;
  const std::vector<float> x = normal_vector(300'007, 19);
  std::uint64_t seed = 0;
  for (const std::size_t k : {std::size_t{1}, std::size_t{300}, std::size_t{3'000}, x.size()}) {
    for (int call = 0; call < 2; ++call) {
      SparseSet expected;
      cpu.select(x, k, ++seed, expected);
      DeviceVector dx(x, stream_);
      gpu.select(dx.data(), x.size(), k, seed, out, stream_);
      expect_same_set(expected, cuda::download(out, stream_),
                      "k " + std::to_string(k) + " seed " + std::to_string(seed));
    }
  }
}

TEST_F(CudaKernels, ThresholdCountAndSelectionAreTheCpus) {
  std::vector<float> x = normal_vector(300'001, 5);
  x[17] = kNaN;
  cuda::ThresholdSelector gpu;
  cuda::DeviceSparseSet out;
  out.reserve(x.size(), stream_);
  cuda::DeviceArray<std::uint32_t> count(1, stream_);
  DeviceVector dx(x, stream_);
  for (const float threshold : {-1.0f, 0.0f, 0.5f, 2.5f, 4.0f, 1e30f}) {
    SparseSet expected;
    select_abs_greater(x, threshold, expected);
    gpu.select(dx.data(), x.size(), threshold, out, stream_);
    expect_same_set(expected, cuda::download(out, stream_),
                    "threshold " + std::to_string(threshold));
    cuda::count_abs_greater(dx.data(), x.size(), threshold, count.data(), stream_);
    std::uint32_t counted = 0;
    cuda::check(cudaMemcpy(&counted, count.data(), sizeof counted, cudaMemcpyDeviceToHost),
                "count");
    EXPECT_EQ(counted, count_abs_greater(x, threshold)) << threshold;
  }
}

TEST_F(CudaKernels, EmptyInputSelectsNothing) {
  cuda::DeviceSparseSet out;
  cuda::ThresholdSelector().select(nullptr, 0, 1.0f, out, stream_);
  EXPECT_EQ(cuda::download_count(out, stream_), 0u);
}

// A selector's scratch moves between streams: each call waits for the last one's work.
TEST_F(CudaKernels, ASelectorMayChangeStreamsBetweenCalls) {
  cudaStream_t other = nullptr;
  cuda::check(cudaStreamCreate(&other), "cudaStreamCreate");
  const std::vector<float> small = normal_vector(10'000, 41), large = normal_vector(500'000, 42);
  TopkSelector cpu;
  DeviceVector dsmall(small, stream_), dlarge(large, stream_);
  cuda::check(cudaStreamSynchronize(stream_), "upload");
  {  // the last round leaves the scratch on `other`, which must outlive the selector
    cuda::TopkSelector gpu;
    for (int round = 0; round < 4; ++round) {
      const cudaStream_t stream = round % 2 == 0 ? stream_ : other;
      const std::vector<float>& x = round < 2 ? small : large;
      cuda::DeviceSparseSet out;
      gpu.select((round < 2 ? dsmall : dlarge).data(), x.size(), 100, out, stream);
      SparseSet expected;
      cpu.select(x, 100, expected);
      expect_same_set(expected, cuda::download(out, stream), "round " + std::to_string(round));
    }
  }
  cuda::check(cudaStreamDestroy(other), "cudaStreamDestroy");
}

TEST_F(CudaKernels, SelectionBeyondCapacityReportsItsTrueCount) {
  const std::vector<float> x = normal_vector(10'000, 9);
  SparseSet expected;
  select_abs_greater(x, 1.0f, expected);
  ASSERT_GT(expected.size(), 100u);
  cuda::DeviceSparseSet out;
  out.reserve(100, stream_);
  DeviceVector dx(x, stream_);
  cuda::ThresholdSelector().select(dx.data(), x.size(), 1.0f, out, stream_);
  EXPECT_EQ(cuda::download_count(out, stream_), expected.size());
  const SparseSet got = cuda::download(out, stream_);
  EXPECT_EQ(got.indices,
            std::vector<std::uint32_t>(expected.indices.begin(), expected.indices.begin() + 100));
}

TEST_F(CudaKernels, GaussianMatchesTheCpuUpToItsThresholdsLastBits) {
  GaussianSelector cpu;
  cuda::GaussianSelector gpu;
  // Normal data: no refinement at k = 2000; one and then a count in range at k = 170 000 (the
  // later counting passes find their threshold unchanged); heavy tails (seed 3: a normal
  // divided by a uniform): all three.
  struct Case {
    unsigned seed;
    std::size_t k;
  };
  for (const Case c : {Case{1, 2'000}, Case{2, 2'000}, Case{1, 170'000}, Case{3, 2'000}}) {
    const unsigned seed = c.seed;
    const std::size_t k = c.k;
    std::vector<float> x = normal_vector(2'000'000, seed);
    if (seed == 3) {
      std::mt19937 rng(seed);
      std::uniform_real_distribution<float> u(0.01f, 1.0f);
      for (float& v : x) v /= u(rng);
    }
    SparseSet expected;
    const GaussianSelection cpu_pick = cpu.select(x, k, 0.001, expected);
    cuda::DeviceSparseSet out;
    out.reserve(x.size(), stream_);
    DeviceVector dx(x, stream_);
    gpu.select(dx.data(), x.size(), k, 0.001, out, stream_);
    const GaussianSelection gpu_pick = gpu.last_selection(stream_);
    EXPECT_EQ(gpu_pick.refinements, cpu_pick.refinements) << "seed " << seed << " k " << k;
    EXPECT_NEAR(gpu_pick.threshold, cpu_pick.threshold, 1e-5 * cpu_pick.threshold) << seed;
    const SparseSet got = cuda::download(out, stream_);
    const std::set<std::uint32_t> a(expected.indices.begin(), expected.indices.end());
    const std::set<std::uint32_t> b(got.indices.begin(), got.indices.end());
    std::vector<std::uint32_t> differ;
    std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(),
                                  std::back_inserter(differ));
    for (const std::uint32_t i : differ) {
      EXPECT_NEAR(std::fabs(x[i]), cpu_pick.threshold, 1e-5 * cpu_pick.threshold)
          << "entry " << i << " selected by one side only, far from the threshold";
    }
    EXPECT_TRUE(std::is_sorted(got.indices.begin(), got.indices.end()));
  }
}

SparseSet random_set(std::size_t d, std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::set<std::uint32_t> picked;
  std::uniform_int_distribution<std::uint32_t> index(0, static_cast<std::uint32_t>(d - 1));
  while (picked.size() < size) picked.insert(index(rng));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  SparseSet s;
  for (const std::uint32_t i : picked) {
    s.indices.push_back(i);
    s.values.push_back(normal(rng));
  }
  return s;
}

TEST_F(CudaKernels, MergeKeepKIsTheCpuMerge) {
  cuda::SparseMerger merger;
  for (const std::size_t k :
       {std::size_t{1}, std::size_t{50}, std::size_t{700}, std::size_t{5000}}) {
    // d small enough that the sets share many indices; b is placed in a larger buffer than its
    // count, so the merge must ignore the slots past the count.
    const SparseSet a = random_set(3'000, std::min<std::size_t>(k, 1'000), 21);
    const SparseSet b = random_set(3'000, std::min<std::size_t>(k, 900), 22);
    SparseSet expected;
    merge_keep_k(a, b, k, expected);
    cuda::DeviceSparseSet da, db, out;
    upload(a, da, stream_);
    db.reserve(b.size() + 333, stream_);
    upload(b, db, stream_);
    merger.merge_keep_k(da, db, k, out, stream_);
    expect_same_set(expected, cuda::download(out, stream_), "k " + std::to_string(k));
  }
}

TEST_F(CudaKernels, MergeSumsInfinitiesAndSignedZerosAsTheCpu) {
  SparseSet a, b;
  a.indices = {3, 7, 9, 12, 20};
  a.values = {kInf, -0.0f, 1.0f, -0.0f, 5.0f};
  b.indices = {3, 7, 11, 20};
  b.values = {2.0f, 0.0f, -kInf, -5.0f};
  cuda::SparseMerger merger;
  cuda::DeviceSparseSet da, db, out;
  upload(a, da, stream_);
  upload(b, db, stream_);
  for (const std::size_t k : {std::size_t{2}, std::size_t{6}, std::size_t{10}}) {
    SparseSet expected;
    merge_keep_k(a, b, k, expected);
    merger.merge_keep_k(da, db, k, out, stream_);
    expect_same_set(expected, cuda::download(out, stream_), "k " + std::to_string(k));
  }
}

TEST_F(CudaKernels, MergeOfEmptySetsIsEmpty) {
  cuda::DeviceSparseSet a, b, out;
  upload(SparseSet{}, a, stream_);
  upload(SparseSet{}, b, stream_);
  cuda::SparseMerger().merge_keep_k(a, b, 10, out, stream_);
  EXPECT_EQ(cuda::download_count(out, stream_), 0u);
}

TEST_F(CudaKernels, ScatterAddAddAndZeroAppliedAreTheCpus) {
  const std::size_t d = 100'000;
  std::vector<float> acc = normal_vector(d, 31);
  const std::vector<float> g = normal_vector(d, 32);
  const SparseSet s = random_set(d, 4'000, 33);
  std::vector<std::uint8_t> applied(s.size());
  for (std::size_t i = 0; i < applied.size(); ++i) applied[i] = i % 3 != 0;

  std::vector<float> expected = acc;
  add(expected, g);
  scatter_add(s, expected);
  zero_applied(expected, s, applied);

  DeviceVector dacc(acc, stream_), dg(g, stream_);
  cuda::DeviceSparseSet ds;
  upload(s, ds, stream_);
  cuda::DeviceArray<std::uint8_t> dapplied(applied.size(), stream_);
  cuda::check(cudaMemcpyAsync(dapplied.data(), applied.data(), applied.size(),
                              cudaMemcpyHostToDevice, stream_),
              "upload applied");
  cuda::add(dacc.data(), dg.data(), d, stream_);
  cuda::scatter_add(ds, dacc.data(), stream_);
  cuda::zero_applied(dacc.data(), ds, dapplied.data(), stream_);
  const std::vector<float> got = dacc.download(stream_);
  for (std::size_t i = 0; i < d; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(expected[i]), std::bit_cast<std::uint32_t>(got[i]))
        << "entry " << i;
  }
}

// What the trainer's step and dense's 16-bit wire do on a GPU (kernels/ops.hpp's device half).
TEST_F(CudaKernels, DenseOperationsAreTheCpus) {
  const std::size_t d = 100'003;
  const std::vector<float> g = normal_vector(d, 41);
  const auto expect_bits = [](const std::vector<float>& want, const std::vector<float>& got,
                              const char* what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(want[i]), std::bit_cast<std::uint32_t>(got[i]))
          << what << ": entry " << i;
    }
  };
  std::vector<float> x = normal_vector(d, 42);
  DeviceVector dx(x, stream_), dg(g, stream_);
  scale(x, 0.3f);
  cuda::scale(dx.data(), d, 0.3f, stream_);
  expect_bits(x, dx.download(stream_), "scale");
  const std::vector<float> b = normal_vector(d, 44);
  DeviceVector db(b, stream_);
  add_difference(x, g, b);
  cuda::add_difference(dx.data(), dg.data(), db.data(), d, stream_);
  expect_bits(x, dx.download(stream_), "add_difference");
  const double norm = squared_norm(x);
  EXPECT_NEAR(cuda::squared_norm(dx.data(), d, stream_), norm, 1e-12 * norm)
      << "summed in another order";

  for (const bool nesterov : {false, true}) {
    std::vector<float> p = normal_vector(d, 43), m(d, 0.0f);
    DeviceVector dp(p, stream_), dm(m, stream_);
    const SgdHyperParams hp{0.05f, 0.9f, 5e-4f, nesterov};
    for (int step = 0; step < 3; ++step) {
      sgd_step(p, g, m, hp);
      cuda::sgd_step(dp.data(), dg.data(), dm.data(), d, hp, stream_);
    }
    expect_bits(p, dp.download(stream_), nesterov ? "nesterov parameters" : "parameters");
    expect_bits(m, dm.download(stream_), "momentum");
  }

  for (const bool bf16 : {false, true}) {
    std::vector<std::uint16_t> want(d);
    bf16 ? to_bf16(g, want) : to_fp16(g, want);
    cuda::DeviceArray<std::uint16_t> bits(d, stream_);
    cuda::to_half(dg.data(), bits.data(), d, bf16, stream_);
    std::vector<std::uint16_t> got(d);
    cuda::check(cudaMemcpyAsync(got.data(), bits.data(), d * sizeof(std::uint16_t),
                                cudaMemcpyDeviceToHost, stream_),
                "download");
    cuda::check(cudaStreamSynchronize(stream_), "download");
    EXPECT_EQ(got, want) << (bf16 ? "bf16" : "fp16");
    std::vector<float> back(d);
    bf16 ? from_bf16(want, back) : from_fp16(want, back);
    DeviceVector dback(std::vector<float>(d), stream_);
    cuda::from_half(bits.data(), dback.data(), d, bf16, stream_);
    expect_bits(back, dback.download(stream_), "from half");
  }
}

// Every kernel wrapper's scratch (squared_distance's one-double result, a selector's buffers) is
// freed after the call: the device's pool must keep that memory, not hand it back to the driver
// at the next synchronization, so that a step's calls cost no driver allocation.
TEST_F(CudaKernels, FreedScratchStaysInTheDevicesPoolAcrossSynchronizations) {
  constexpr std::uint64_t kBytes = 64u << 20;
  { const cuda::DeviceArray<std::byte> scratch(kBytes, stream_); }
  cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cudaMemPool_t pool = nullptr;
  cuda::check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t reserved = 0, threshold = 0;
  cuda::check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
              "cudaMemPoolGetAttribute");
  cuda::check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
              "cudaMemPoolGetAttribute");
  EXPECT_GE(reserved, kBytes) << "the pool gave the freed buffer back at the synchronization";
  EXPECT_EQ(threshold, std::numeric_limits<std::uint64_t>::max());
}

// A failed call's error is read where it fails, so the next launch does not report it as its own.
TEST_F(CudaKernels, AFailedCallsErrorIsNotTheNextLaunchs) {
  int devices = 0;
  cuda::check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  EXPECT_THROW(cuda::check(cudaSetDevice(devices), "cudaSetDevice past the last device"),
               std::runtime_error);
  const std::vector<float> x = normal_vector(1000, 46);
  DeviceVector dx(x, stream_);
  EXPECT_NO_THROW(cuda::scale(dx.data(), x.size(), 2.0f, stream_));
}

// What the device operations release in destructors (a stream, an event, a buffer) cannot report
// a failure, so they read it: the next launch does not report it as its own.
TEST_F(CudaKernels, AFailedReleaseIsNotTheNextLaunchsError) {
  int not_device_memory = 0;
  ops::release(&not_device_memory, cuda_place(stream_));
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
  const std::vector<float> x = normal_vector(1000, 47);
  DeviceVector dx(x, stream_);
  EXPECT_NO_THROW(cuda::scale(dx.data(), x.size(), 2.0f, stream_));
}

// CUDA keeps a query's "not ready" as the thread's last error, as it keeps a failure, until
// something reads it: not_ready() reads it, and leaves a failure to its caller. A stand-in for the
// runtime's last error, so that this runs without a device.
TEST(CudaQueries, NotReadyIsReadSoThatNoLaterLaunchReportsIt) {
  cudaError_t last_error = cudaSuccess;
  const auto query = [&](cudaError_t answer) {
    if (answer != cudaSuccess) last_error = answer;
    return answer;
  };
  const auto read_last_error = [&] { return std::exchange(last_error, cudaSuccess); };
  EXPECT_TRUE(cuda::not_ready(query(cudaErrorNotReady), read_last_error));
  EXPECT_EQ(last_error, cudaSuccess);
  EXPECT_FALSE(cuda::not_ready(query(cudaSuccess), read_last_error));
  EXPECT_EQ(last_error, cudaSuccess);
  EXPECT_FALSE(cuda::not_ready(query(cudaErrorLaunchFailure), read_last_error));
  EXPECT_EQ(last_error, cudaErrorLaunchFailure) << "a failure is its caller's to check";
}

// Checked on the host before anything is enqueued, so these need no device.
TEST(CudaKernelArguments, BadArgumentsThrowBeforeAnyDeviceCall) {
  cuda::DeviceSparseSet out;
  EXPECT_THROW(cuda::TopkSelector().select(nullptr, 10, 0, out, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::TopkSelector().select(nullptr, 10, 11, out, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::GaussianSelector().select(nullptr, 10, 0, 0.1, out, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::GaussianSelector().select(nullptr, 10, 1, 0.0, out, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::GaussianSelector().select(nullptr, 10, 1, 1.5, out, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::DgcSelector().select(nullptr, 10, 0, out, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::DgcSelector().select(nullptr, 10, 11, out, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::RandomSelector().select(nullptr, 10, 0, 1, out, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::RandomSelector().select(nullptr, 10, 11, 1, out, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::ThresholdSelector().select(nullptr, 10, kNaN, out, nullptr),
               std::invalid_argument);
  cuda::DeviceSparseSet a;
  EXPECT_THROW(cuda::SparseMerger().merge_keep_k(a, a, 5, a, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::SparseMerger().merge_keep_k(a, a, 0, out, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::SparseMerger().merge_keep_k(a, a, 5, out, nullptr), std::invalid_argument)
      << "two sets with no slots";
}

}  // namespace
}  // namespace commsgd::kernels
