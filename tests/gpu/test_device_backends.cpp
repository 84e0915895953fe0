// The device back ends of a Communicator under mpirun (P = 1, 2): NCCL with one CUDA device per
// rank, the staged back end with any (ranks may share one). Every collective and send_receive
// pattern on device buffers checked on the host against what the ranks put in, and traffic
// counted as for host buffers; the communication engine over each; a wait that polled leaves no
// error behind, and an abort from another thread ends a polling wait. Without a device per rank
// the tests skip, on every rank alike, so no rank waits in a collective for one that skipped.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "algorithms/comm/engine.hpp"
#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/comm/nccl_backend.hpp"
#include "algorithms/comm/staged_backend.hpp"
#include "kernels/cuda/device_array.hpp"
#include "kernels/half_precision.hpp"
#include "tests/gpu/cuda_devices.hpp"
#include "tests/gpu/spin.hpp"

namespace commsgd::comm {
namespace {

using kernels::cuda::check;

// Device memory holding n values of T, zeroed or copied from the host with cudaMemcpy.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : size_(n) {
    // Never empty: cudaMalloc may answer 0 bytes with a null pointer, and a caller's empty block
    // still points into its buffer.
    check(cudaMalloc(&data_, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
    check(cudaMemset(data_, 0, n * sizeof(T)), "cudaMemset");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    check(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return static_cast<T*>(data_); }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    check(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
  }

 private:
  void* data_ = nullptr;
  std::size_t size_;
};

// What every rank q contributes at index i, for expected values computed on the host.
template <class Value>
auto contribution(int q, std::size_t n, Value value) {
  std::vector<std::invoke_result_t<Value, int, std::size_t>> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = value(q, i);
  return x;
}

// Each case runs on both back ends: "nccl" and "staged".
class DeviceBackends : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const bool nccl = GetParam() == "nccl";
    if (const std::string missing =
            nccl ? testing::no_gpu_per_rank(mpi_) : testing::no_cuda_device(mpi_);
        !missing.empty()) {
      GTEST_SKIP() << missing;
    }
    int devices = 1;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check(cudaSetDevice(mpi_.placement().local_rank % devices), "cudaSetDevice");
    check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    comm_ = std::make_unique<MpiCommunicator>();
    if (nccl) {
      comm_->attach_device_backend(std::make_unique<NcclBackend>(*comm_));
    } else {
      comm_->attach_device_backend(std::make_unique<StagedBackend>(*comm_));
    }
    on_device_ = kernels::cuda_place(stream_);
    p_ = comm_->size();
    r_ = comm_->rank();
  }
  void TearDown() override {
    comm_.reset();
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // The collectives only enqueue: the results are there once the stream is done.
  void synchronize() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  MpiCommunicator mpi_;
  cudaStream_t stream_ = nullptr;
  // A communicator whose device buffers go to the back end under test.
  std::unique_ptr<MpiCommunicator> comm_;
  Place on_device_;
  int p_ = 1;
  int r_ = 0;
};

TEST_P(DeviceBackends, AllreduceSumsFloats) {
  constexpr std::size_t kCount = 1000;
  const auto value = [](int q, std::size_t i) {
    return static_cast<float>(i) + static_cast<float>(q + 1);
  };
  DeviceBuffer<float> x(contribution(r_, kCount, value));
  comm_->allreduce(x.data(), kCount, DataType::f32, ReduceOp::sum, on_device_);
  std::vector<float> expected(kCount, 0.0f);
  for (int q = 0; q < p_; ++q) {
    for (std::size_t i = 0; i < kCount; ++i) expected[i] += value(q, i);
  }
  synchronize();
  EXPECT_EQ(x.download(), expected);
}

// Halves and sums small enough to be exact, whatever order NCCL adds them in.
TEST_P(DeviceBackends, AllreduceSumsHalfPrecisionBits) {
  constexpr std::size_t kCount = 64;
  const auto value = [](int q, std::size_t i) {
    return 0.5f * static_cast<float>(i % 16) + static_cast<float>(q);
  };
  std::vector<float> expected(kCount, 0.0f);
  for (int q = 0; q < p_; ++q) {
    for (std::size_t i = 0; i < kCount; ++i) expected[i] += value(q, i);
  }
  for (const DataType type : {DataType::f16, DataType::bf16}) {
    const bool fp16 = type == DataType::f16;
    std::vector<std::uint16_t> bits(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      bits[i] = fp16 ? kernels::to_fp16(value(r_, i)) : kernels::to_bf16(value(r_, i));
    }
    DeviceBuffer<std::uint16_t> x(bits);
    comm_->allreduce(x.data(), kCount, type, ReduceOp::sum, on_device_);
    synchronize();
    std::vector<float> sum(kCount);
    const std::vector<std::uint16_t> reduced = x.download();
    for (std::size_t i = 0; i < kCount; ++i) {
      sum[i] = fp16 ? kernels::from_fp16(reduced[i]) : kernels::from_bf16(reduced[i]);
    }
    EXPECT_EQ(sum, expected) << (fp16 ? "f16" : "bf16");
    EXPECT_THROW(comm_->allreduce(x.data(), kCount, type, ReduceOp::max, on_device_),
                 std::invalid_argument);
  }
}

TEST_P(DeviceBackends, AllreduceTakesTheMaxOfDoubles) {
  constexpr std::size_t kCount = 300;
  const auto value = [](int q, std::size_t i) {
    return (q % 2 == 0 ? 1.0 : -1.0) * static_cast<double>(i) + 0.25 * q;
  };
  DeviceBuffer<double> x(contribution(r_, kCount, value));
  comm_->allreduce(x.data(), kCount, DataType::f64, ReduceOp::max, on_device_);
  std::vector<double> expected = contribution(0, kCount, value);
  for (int q = 1; q < p_; ++q) {
    for (std::size_t i = 0; i < kCount; ++i) expected[i] = std::max(expected[i], value(q, i));
  }
  synchronize();
  EXPECT_EQ(x.download(), expected);
}

std::uint8_t byte_value(int q, std::size_t i) {
  return static_cast<std::uint8_t>(16 * q + static_cast<int>(i) + 1);
}

TEST_P(DeviceBackends, AllgatherPutsTheBlocksInRankOrder) {
  constexpr std::size_t kBlock = 5;
  DeviceBuffer<std::uint8_t> send(contribution(r_, kBlock, byte_value));
  DeviceBuffer<std::uint8_t> recv(kBlock * static_cast<std::size_t>(p_));
  comm_->allgather(send.data(), recv.data(), kBlock, on_device_);
  std::vector<std::uint8_t> expected;
  for (int q = 0; q < p_; ++q) {
    const std::vector<std::uint8_t> block = contribution(q, kBlock, byte_value);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  synchronize();
  EXPECT_EQ(recv.download(), expected);
}

// Unequal blocks, rank 1's empty.
TEST_P(DeviceBackends, AllgathervPacksUnequalBlocksBackToBack) {
  std::vector<std::size_t> sizes(static_cast<std::size_t>(p_));
  for (int q = 0; q < p_; ++q) sizes[static_cast<std::size_t>(q)] = q == 1 ? 0 : 2 * q + 3;
  std::vector<std::uint8_t> expected;
  for (int q = 0; q < p_; ++q) {
    const std::vector<std::uint8_t> block =
        contribution(q, sizes[static_cast<std::size_t>(q)], byte_value);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  DeviceBuffer<std::uint8_t> send(
      contribution(r_, sizes[static_cast<std::size_t>(r_)], byte_value));
  DeviceBuffer<std::uint8_t> recv(expected.size());
  comm_->allgatherv(send.data(), recv.data(), sizes, on_device_);
  synchronize();
  EXPECT_EQ(recv.download(), expected);
}

TEST_P(DeviceBackends, BroadcastsFromTheLastRank) {
  constexpr std::size_t kCount = 100;
  const int root = p_ - 1;
  const auto value = [&](int q, std::size_t i) {
    const auto x = static_cast<std::int64_t>(i);
    return q == root ? x * x - 5 : -1;
  };
  DeviceBuffer<std::int64_t> x(contribution(r_, kCount, value));
  comm_->broadcast(x.data(), kCount * sizeof(std::int64_t), root, on_device_);
  synchronize();
  EXPECT_EQ(x.download(), contribution(root, kCount, value));
}

TEST_P(DeviceBackends, SendReceiveAroundARing) {
  constexpr std::size_t kCount = 257;
  const int next = (r_ + 1) % p_;
  const int previous = (r_ + p_ - 1) % p_;
  const auto value = [](int q, std::size_t i) {
    return static_cast<float>(1000 * q) + static_cast<float>(i);
  };
  DeviceBuffer<float> send(contribution(r_, kCount, value));
  DeviceBuffer<float> recv(kCount);
  const Outgoing out{send.data(), kCount * sizeof(float), next};
  const Incoming in{recv.data(), kCount * sizeof(float), previous};
  comm_->send_receive(std::span(&out, 1), std::span(&in, 1), on_device_);
  synchronize();
  EXPECT_EQ(recv.download(), contribution(previous, kCount, value));
}

// Two messages of different sizes to one peer arrive in the order they were posted.
TEST_P(DeviceBackends, SendReceiveKeepsTheOrderOfTwoMessagesToOnePeer) {
  const int next = (r_ + 1) % p_;
  const int previous = (r_ + p_ - 1) % p_;
  const auto first = [](int q, std::size_t i) {
    return static_cast<float>(100 * q) + static_cast<float>(i);
  };
  const auto second = [&](int q, std::size_t i) { return -first(q, i) - 1; };
  DeviceBuffer<float> send_first(contribution(r_, 10, first));
  DeviceBuffer<float> send_second(contribution(r_, 3, second));
  DeviceBuffer<float> recv_first(10);
  DeviceBuffer<float> recv_second(3);
  const Outgoing sends[] = {{send_first.data(), 10 * sizeof(float), next},
                            {send_second.data(), 3 * sizeof(float), next}};
  const Incoming receives[] = {{recv_first.data(), 10 * sizeof(float), previous},
                               {recv_second.data(), 3 * sizeof(float), previous}};
  comm_->send_receive(sends, receives, on_device_);
  synchronize();
  EXPECT_EQ(recv_first.download(), contribution(previous, 10, first));
  EXPECT_EQ(recv_second.download(), contribution(previous, 3, second));
}

// The same calls on either back end, on two buffers of kScratch bytes in `place`.
constexpr std::size_t kScratch = 4096;
void exercise(Communicator& comm, std::byte* in, std::byte* out, Place place) {
  const int p = comm.size();
  const int r = comm.rank();
  comm.allreduce(in, 64, DataType::f32, ReduceOp::sum, place);
  comm.allgather(in, out, 16, place);
  std::vector<std::size_t> sizes(static_cast<std::size_t>(p));
  for (int q = 0; q < p; ++q) sizes[static_cast<std::size_t>(q)] = q == 1 ? 0 : 2 * q + 3;
  comm.allgatherv(in, out, sizes, place);
  comm.broadcast(in, 40, p - 1, place);
  const Outgoing sends[] = {{in, 12, (r + 1) % p}, {in + 12, 4, (r + 1) % p}};
  const Incoming receives[] = {{out, 12, (r + p - 1) % p}, {out + 12, 4, (r + p - 1) % p}};
  comm.send_receive(sends, receives, place);
  comm.synchronize(place);
  comm.barrier();
}

TEST_P(DeviceBackends, CountsTrafficAsTheMpiBackendDoes) {
  MpiCommunicator reference;
  std::vector<std::byte> in(kScratch);
  std::vector<std::byte> out(kScratch);
  exercise(reference, in.data(), out.data(), kHost);
  DeviceBuffer<std::byte> device_in(kScratch);
  DeviceBuffer<std::byte> device_out(kScratch);
  exercise(*comm_, device_in.data(), device_out.data(), on_device_);
  const CommCounters& want = reference.counters();
  const CommCounters& got = comm_->counters();
  EXPECT_EQ(got.calls, want.calls);
  EXPECT_EQ(got.messages_sent, want.messages_sent);
  EXPECT_EQ(got.messages_received, want.messages_received);
  EXPECT_EQ(got.bytes_sent, want.bytes_sent);
  EXPECT_EQ(got.bytes_received, want.bytes_received);
}

// A duplicate (a communication thread's) has a back end of its own, on this stream or another.
TEST_P(DeviceBackends, DuplicatesReduceIndependently) {
  cudaStream_t other = nullptr;
  check(cudaStreamCreate(&other), "cudaStreamCreate");
  {
    const std::unique_ptr<Communicator> copy = comm_->duplicate();
    ASSERT_TRUE(copy->has_device_backend());
    std::vector<double> ones(10, 1.0);
    DeviceBuffer<double> a(ones);
    DeviceBuffer<double> b(ones);
    DeviceBuffer<double> c(ones);
    comm_->allreduce(a.data(), ones.size(), DataType::f64, ReduceOp::sum, on_device_);
    copy->allreduce(b.data(), ones.size(), DataType::f64, ReduceOp::sum, on_device_);
    copy->allreduce(c.data(), ones.size(), DataType::f64, ReduceOp::sum,
                    kernels::cuda_place(other));
    copy->synchronize(kernels::cuda_place(other));
    synchronize();
    const std::vector<double> expected(ones.size(), static_cast<double>(p_));
    EXPECT_EQ(a.download(), expected);
    EXPECT_EQ(b.download(), expected);
    EXPECT_EQ(c.download(), expected);
    EXPECT_EQ(comm_->counters().calls, 1u) << "each copy counts its own traffic";
  }
  cudaStreamDestroy(other);
}

// Host buffers of the same communicator still go over MPI.
TEST_P(DeviceBackends, HostBuffersStayOnTheHostBackEnd) {
  std::vector<double> x(4, 1.0);
  comm_->allreduce(std::span(x), ReduceOp::sum);
  EXPECT_EQ(x, std::vector<double>(4, static_cast<double>(p_)));
}

// The communication engine on device buffers: its operations run one at a time, in order, on its
// own stream and its own duplicate of the back end, beside the caller's.
TEST_P(DeviceBackends, AnEngineRunsDeviceCollectivesInOrderOnItsStream) {
  constexpr int kOperations = 16;
  constexpr std::size_t kCount = 4096;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
  std::vector<int> order;
  {
    Engine engine(*comm_);
    const Place place = engine.place(kernels::Memory::cuda);
    EXPECT_NE(place.stream, on_device_.stream);
    std::vector<Work> works;
    for (int i = 0; i < kOperations; ++i) {
      buffers.push_back(std::make_unique<DeviceBuffer<float>>(
          std::vector<float>(kCount, static_cast<float>(i + 1))));
      float* data = buffers.back()->data();
      works.push_back(engine.start("allreduce", [&order, data, i](Channel& c) {
        order.push_back(i);
        c.comm.allreduce(data, kCount, DataType::f32, ReduceOp::sum, c.place);
        c.comm.synchronize(c.place);
      }));
    }
    // The caller's own communicator goes on beside the engine's.
    DeviceBuffer<float> own(std::vector<float>(kCount, 1.0f));
    comm_->allreduce(own.data(), kCount, DataType::f32, ReduceOp::sum, on_device_);
    for (const Work& work : works) work.wait();
    synchronize();
    EXPECT_EQ(own.download(), std::vector<float>(kCount, static_cast<float>(p_)));
    EXPECT_GT(engine.totals().bytes_sent, 0u);
  }
  std::vector<int> expected(kOperations);
  for (int i = 0; i < kOperations; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
  for (int i = 0; i < kOperations; ++i) {
    ASSERT_EQ(buffers[i]->download(), std::vector<float>(kCount, static_cast<float>((i + 1) * p_)))
        << i;
  }
}

// A failed engine runs nothing more, and stops at once with its back end aborted; the caller's
// communicator, whose back end is another, still works.
TEST_P(DeviceBackends, AFailedEngineStopsAtOnceAndLeavesTheCallersBackEnd) {
  DeviceBuffer<float> x(std::vector<float>(64, 1.0f));
  bool later_ran = false;
  const auto start = std::chrono::steady_clock::now();
  {
    Engine engine(*comm_);
    engine.place(kernels::Memory::cuda);
    const Work failing =
        engine.start("failing", [](Channel&) { throw std::runtime_error("a peer failed"); });
    const Work later = engine.start("later", [&](Channel& c) {
      later_ran = true;
      c.comm.allreduce(x.data(), 64, DataType::f32, ReduceOp::sum, c.place);
    });
    EXPECT_THROW(failing.wait(), std::runtime_error);
    EXPECT_THROW(later.wait(), std::runtime_error);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(later_ran);
  EXPECT_LT(seconds, 10.0) << "no finalize waiting out the timeout";
  comm_->allreduce(x.data(), 64, DataType::f32, ReduceOp::sum, on_device_);
  synchronize();
  EXPECT_EQ(x.download(), std::vector<float>(64, static_cast<float>(p_)));
}

// A wait that polled the stream while a kernel ran ("not ready", many times over) leaves no error
// for the next launch check to report as its own.
TEST_P(DeviceBackends, AWaitThatPolledLeavesNoErrorBehind) {
  constexpr std::size_t kCount = 1024;
  DeviceBuffer<float> x(std::vector<float>(kCount, 1.0f));
  testing::spin(stream_, std::chrono::milliseconds(200));
  comm_->allreduce(x.data(), kCount, DataType::f32, ReduceOp::sum, on_device_);
  comm_->synchronize(on_device_);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
  EXPECT_EQ(x.download(), std::vector<float>(kCount, static_cast<float>(p_)));
}

// An engine operation follows the caller's stream as it was when the operation was started (as
// dense's bucket, started when backward filled it), not as it is when the engine's thread gets to
// it: work the caller queues after start() does not hold the operation up.
TEST_P(DeviceBackends, AnEngineOperationFollowsTheCallersStreamAsItWasAtItsStart) {
  constexpr std::size_t kCount = 1024;
  DeviceBuffer<float> x(std::vector<float>(kCount, 1.0f));
  Engine engine(*comm_);
  engine.place(kernels::Memory::cuda);
  const auto reduce = [&](Channel& c) {
    c.comm.allreduce(x.data(), kCount, DataType::f32, ReduceOp::sum, c.place);
    c.comm.synchronize(c.place);
  };
  engine.start("first use, which connects the peers", reduce, on_device_).wait();
  // The engine's thread is held until the caller has queued a long kernel after the start, so
  // that the operation runs when the caller's stream holds more than it did at its start.
  std::promise<void> queued;
  engine.start("held", [held = queued.get_future().share()](Channel&) { held.wait(); });
  const Work reduced = engine.start("allreduce", reduce, on_device_);
  testing::spin(stream_, std::chrono::milliseconds(1500));
  queued.set_value();
  reduced.wait();
  EXPECT_EQ(cudaStreamQuery(stream_), cudaErrorNotReady)
      << "the allreduce waited for the kernel queued after it was started";
  (void)cudaGetLastError();  // the "not ready" answer
  synchronize();
  EXPECT_EQ(x.download(), std::vector<float>(kCount, static_cast<float>(p_ * p_)));
}

// The stall watchdog and an engine's stop abort a back end from another thread while its owner
// may be polling it: the owner's wait ends with an error naming the abort, never a use of a freed
// NCCL communicator.
TEST_P(DeviceBackends, AnAbortFromAnotherThreadEndsAPollingWait) {
  if (GetParam() != "nccl") GTEST_SKIP() << "the staged back end has no communicator to abort";
  std::thread aborter([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    comm_->abort_device_backend();
  });
  std::string error;
  try {
    for (;;) comm_->synchronize(on_device_);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  aborter.join();
  EXPECT_NE(error.find("aborted"), std::string::npos) << error;
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
}

INSTANTIATE_TEST_SUITE_P(BackEnds, DeviceBackends, ::testing::Values("nccl", "staged"));

// Without a device back end, a device buffer is refused before anything is sent.
TEST(DeviceBackend, ADeviceBufferNeedsOne) {
  MpiCommunicator mpi;
  float x = 0;
  EXPECT_THROW(mpi.allreduce(&x, 1, DataType::f32, ReduceOp::sum, kernels::cuda_place(nullptr)),
               std::logic_error);
  EXPECT_EQ(mpi.counters().calls, 0u);
}

}  // namespace
}  // namespace commsgd::comm
