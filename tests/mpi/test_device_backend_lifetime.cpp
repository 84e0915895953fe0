// How a Communicator ends its device back end (P = 1, 2): destroyed on the ordinary path, the
// back end is left to finish (NCCL finalizes, waiting for its peers); destroyed while a failure
// unwinds the stack, the back end is aborted first, so that a failing rank exits at once instead
// of waiting out the back end's timeout once per communicator. The back end here records what it
// is asked; NCCL's abort itself needs a GPU (scripts/gpu-check.sh).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"

namespace commsgd::comm {
namespace {

class RecordingBackend final : public DeviceBackend {
 public:
  RecordingBackend(std::vector<std::string>& log, std::string name)
      : log_(log), name_(std::move(name)) {}
  ~RecordingBackend() override { log_.push_back(name_ + " destroyed"); }

  void allreduce(void*, std::size_t, DataType, ReduceOp, void*) override { unused(); }
  void allgather(const void*, void*, std::size_t, void*) override { unused(); }
  void allgatherv(const void*, void*, std::span<const std::size_t>, void*) override { unused(); }
  void broadcast(void*, std::size_t, int, void*) override { unused(); }
  void send_receive(std::span<const Outgoing>, std::span<const Incoming>, void*) override {
    unused();
  }
  void synchronize(void*) override { unused(); }
  std::unique_ptr<DeviceBackend> duplicate(Communicator&) override {
    return std::make_unique<RecordingBackend>(log_, name_ + "'s duplicate");
  }
  void abort() noexcept override { log_.push_back(name_ + " aborted"); }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("no device call in this test"); }

  std::vector<std::string>& log_;
  std::string name_;
};

std::unique_ptr<Communicator> with_recording_backend(std::vector<std::string>& log) {
  MpiCommunicator world;
  std::unique_ptr<Communicator> comm = world.duplicate();
  comm->attach_device_backend(std::make_unique<RecordingBackend>(log, "backend"));
  return comm;
}

TEST(DeviceBackendLifetime, DestroyedOnTheOrdinaryPathTheBackEndIsLeftToFinish) {
  std::vector<std::string> log;
  with_recording_backend(log).reset();
  EXPECT_EQ(log, std::vector<std::string>{"backend destroyed"});
}

TEST(DeviceBackendLifetime, DestroyedByAFailureTheBackEndAndItsDuplicatesAreAbortedFirst) {
  std::vector<std::string> log;
  try {
    const std::unique_ptr<Communicator> comm = with_recording_backend(log);
    // A communication thread's communicator, destroyed before the one it duplicates.
    const std::unique_ptr<Communicator> thread_comm = comm->duplicate();
    throw std::runtime_error("a failure on this rank");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(log, (std::vector<std::string>{
                     "backend's duplicate aborted", "backend's duplicate destroyed",
                     "backend aborted", "backend destroyed"}));
}

TEST(DeviceBackendLifetime, MadeAndDestroyedWhileAnErrorIsHandledIsTheOrdinaryPath) {
  std::vector<std::string> log;
  try {
    throw std::runtime_error("handled");
  } catch (const std::runtime_error&) {
    with_recording_backend(log).reset();
  }
  EXPECT_EQ(log, std::vector<std::string>{"backend destroyed"});
}

}  // namespace
}  // namespace commsgd::comm
