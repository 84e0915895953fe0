// Multi-rank tests of the communication engine (algorithms/comm/engine.hpp) over the MPI back end
// (P = 2..4): operations run in the order started, one at a time, so at most one collective is in
// flight on the engine's communicator, host or device; the first failure fails every later
// operation without running it and aborts the device back end, never finalizing it; a wait that
// sees no progress ends at the deadline; listeners handle messages between operations; traffic
// and time are counted once. Every rank runs every test; no check skips a collective.
//
// The device back end here is a recorder that moves "device" buffers (host memory, marked as CUDA)
// over a host communicator of its own: nothing runs on a GPU on this machine, and what is checked
// is what the engine asks of a device back end, not what NCCL does (the GPU check runs the
// engine with NCCL).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/comm/engine.hpp"
#include "algorithms/comm/mpi_communicator.hpp"
#include "tests/support/wait_limit.hpp"

namespace commsgd::comm {
namespace {

// What the recorders of one communicator and its duplicates saw.
struct DeviceRecord {
  std::atomic<int> in_flight = 0, most_in_flight = 0, calls = 0, aborts = 0, finalized = 0;
};

class RecordingBackend final : public DeviceBackend {
 public:
  RecordingBackend(Communicator& host, std::shared_ptr<DeviceRecord> record)
      : host_(host.duplicate()), record_(std::move(record)) {}
  ~RecordingBackend() override {
    if (!aborted_) ++record_->finalized;
  }
  void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op, void*) override {
    const InFlight call(*record_);
    host_->allreduce(buffer, count, type, op);
  }
  void allgather(const void* send, void* recv, std::size_t bytes, void*) override {
    const InFlight call(*record_);
    host_->allgather(send, recv, bytes);
  }
  void allgatherv(const void* send, void* recv, std::span<const std::size_t> bytes,
                  void*) override {
    const InFlight call(*record_);
    host_->allgatherv(send, recv, bytes);
  }
  void broadcast(void* buffer, std::size_t bytes, int root, void*) override {
    const InFlight call(*record_);
    host_->broadcast(buffer, bytes, root);
  }
  void send_receive(std::span<const Outgoing> sends, std::span<const Incoming> receives,
                    void*) override {
    const InFlight call(*record_);
    host_->send_receive(sends, receives);
  }
  void synchronize(void*) override {}
  std::unique_ptr<DeviceBackend> duplicate(Communicator& host) override {
    return std::make_unique<RecordingBackend>(host, record_);
  }
  void abort() noexcept override {
    aborted_ = true;
    ++record_->aborts;
  }

 private:
  struct InFlight {
    explicit InFlight(DeviceRecord& r) : record(r) {
      const int now = ++record.in_flight;
      ++record.calls;
      int most = record.most_in_flight;
      while (now > most && !record.most_in_flight.compare_exchange_weak(most, now)) {
      }
    }
    ~InFlight() { --record.in_flight; }
    DeviceRecord& record;
  };
  std::unique_ptr<Communicator> host_;
  std::shared_ptr<DeviceRecord> record_;
  bool aborted_ = false;
};

constexpr Place kDevice{Memory::cuda, nullptr};

TEST(CommEngine, RunsOperationsInOrderOneCollectiveAtATimeAndCountsThem) {
  MpiCommunicator world;
  const auto record = std::make_shared<DeviceRecord>();
  world.attach_device_backend(std::make_unique<RecordingBackend>(world, record));
  constexpr int kOperations = 40;
  constexpr std::size_t kCount = 1000;
  std::vector<int> order;  // the engine's
  std::vector<std::vector<float>> buffers(kOperations, std::vector<float>(kCount));
  std::vector<Work> works;
  {
    Engine engine(world);
    for (int i = 0; i < kOperations; ++i) {
      std::fill(buffers[i].begin(), buffers[i].end(), static_cast<float>(i + world.rank()));
      works.push_back(engine.start("allreduce " + std::to_string(i), [&, i](Channel& c) {
        order.push_back(i);
        // Alternately on the host and on the "device": one engine, one collective at a time.
        c.comm.allreduce(buffers[i].data(), kCount, DataType::f32, ReduceOp::sum,
                         i % 2 == 0 ? kHost : kDevice);
      }));
    }
    for (const Work& work : works) work.wait();
    const std::uint64_t p = static_cast<std::uint64_t>(world.size());
    const std::uint64_t each = 2 * (p - 1) * kCount * sizeof(float) / p;
    std::uint64_t sent = 0;
    for (const Work& work : works) {
      EXPECT_EQ(work.bytes_sent(), each);
      EXPECT_EQ(work.bytes_received(), each);
      EXPECT_GE(work.seconds(), 0.0);
      sent += work.bytes_sent();
    }
    EXPECT_EQ(engine.totals().bytes_sent, sent);
    EXPECT_EQ(world.counters().bytes_sent, 0u) << "the engine's traffic is its own";
  }
  std::vector<int> expected(kOperations);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  const int ranks = world.size();
  for (int i = 0; i < kOperations; ++i) {
    const float sum = static_cast<float>(ranks * i + ranks * (ranks - 1) / 2);
    ASSERT_EQ(buffers[i].front(), sum) << i;
  }
  EXPECT_EQ(record->calls, kOperations / 2);
  EXPECT_EQ(record->most_in_flight, 1);
  EXPECT_EQ(record->aborts, 0) << "an engine that did not fail finalizes its back end";
  EXPECT_EQ(record->finalized, 1);
}

TEST(CommEngine, AFailureFailsEveryLaterOperationAndAbortsTheDeviceBackend) {
  MpiCommunicator world;
  const auto record = std::make_shared<DeviceRecord>();
  world.attach_device_backend(std::make_unique<RecordingBackend>(world, record));
  bool later_ran = false;
  {
    Engine engine(world);
    float x = 1;
    const Work first = engine.start("first", [&](Channel& c) {
      c.comm.allreduce(&x, 1, DataType::f32, ReduceOp::sum, kDevice);
    });
    const Work failing = engine.start(
        "failing", [](Channel&) { throw std::runtime_error("the peer's link went down"); });
    const Work later = engine.start("later", [&](Channel& c) {
      later_ran = true;
      c.comm.allreduce(&x, 1, DataType::f32, ReduceOp::sum, kDevice);
    });
    first.wait();
    EXPECT_EQ(x, static_cast<float>(world.size()));
    for (const Work& work : {failing, later}) {
      try {
        work.wait();
        ADD_FAILURE() << "no error";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "the peer's link went down");
      }
    }
    const Work after = engine.start("after", [&](Channel&) { later_ran = true; });
    EXPECT_TRUE(after.completed()) << "a failed engine completes what comes at once";
    EXPECT_NE(after.error(), nullptr);
  }
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(record->aborts, 1) << "the engine's back end is aborted";
  EXPECT_EQ(record->finalized, 0) << "nor finalized (the caller's own still lives)";
  EXPECT_EQ(record->most_in_flight, 1);
}

TEST(CommEngine, AWaitThatSeesNoProgressEndsAtTheDeadline) {
  MpiCommunicator world;
  std::vector<std::byte> received;
  const testing::WaitLimitFor limit(0.3);
  {
    Engine engine(world);
    Work waiting;
    if (world.rank() == 0) {
      waiting =
          engine.start("receive from rank 1", [&](Channel& c) { c.comm.receive(received, 1); });
      const auto start = std::chrono::steady_clock::now();
      try {
        waiting.wait();
        ADD_FAILURE() << "no deadline";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "receive from rank 1: no progress in 0.3 s (--comm-timeout)");
      }
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_GE(waited, 0.3 + kSelfEndingGraceSeconds) << "the stall watchdog has the first word";
      EXPECT_NE(engine.start("later", [](Channel&) {}).error(), nullptr)
          << "the deadline failed the engine";
    }
    world.barrier();
    // Rank 1 sends only now: the receive ends, and the failed engine stops without ending the job.
    if (world.rank() == 1) {
      const std::uint32_t late = 7;
      engine.start("send to rank 0", [&](Channel& c) { c.comm.send(&late, sizeof late, 0); })
          .wait();
    }
  }
  if (world.rank() == 0) {
    EXPECT_EQ(received.size(), sizeof(std::uint32_t));
  }
}

TEST(CommEngine, ListenersHandleMessagesBetweenOperationsUntilDone) {
  MpiCommunicator world;
  constexpr int kMessages = 25;
  const int peers = world.size() - 1;
  long sum = 0;  // touched by rank 0's listener in exclusive sections, read under a pause
  int ended = 0;
  {
    Engine engine(world);
    Work listening;
    if (world.rank() == 0) {
      listening =
          engine.listen("counting", {.peer = [] { return Communicator::kAnyPeer; },
                                     .on_message =
                                         [&](Channel& c, int from) {
                                           std::vector<std::byte> message;
                                           c.comm.receive(message, from);
                                           if (message.empty()) return ++ended < peers;
                                           std::int64_t value = 0;
                                           std::memcpy(&value, message.data(), sizeof value);
                                           c.exclusive([&] { sum += value; });
                                           return true;
                                         },
                                     .done = {}});
    }
    // Operations of rank 0's own run between the listener's messages.
    float x = 1;
    const Work collective = engine.start(
        "allreduce", [&](Channel& c) { c.comm.allreduce(&x, 1, DataType::f32, ReduceOp::sum); });
    if (world.rank() != 0) {
      engine
          .start("send",
                 [&](Channel& c) {
                   for (std::int64_t i = 1; i <= kMessages; ++i) {
                     const std::int64_t value = i * c.comm.rank();
                     c.comm.send(&value, sizeof value, 0);
                   }
                   c.comm.send(nullptr, 0, 0);
                 })
          .wait();
    }
    collective.wait();
    EXPECT_EQ(x, static_cast<float>(world.size()));
    listening.wait();
    if (world.rank() == 0) {
      const Engine::Pause pause = engine.pause();
      long expected = 0;
      for (int r = 1; r < world.size(); ++r) expected += r * kMessages * (kMessages + 1) / 2;
      EXPECT_EQ(sum, expected);
      EXPECT_EQ(engine.totals().bytes_received,
                static_cast<std::uint64_t>(peers * kMessages) * sizeof(std::int64_t) +
                    collective.bytes_received());
    }
  }
}

}  // namespace
}  // namespace commsgd::comm
