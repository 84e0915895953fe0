// Communicator::exchange with its send in parts (P = 2, 3): each part is a message of its own,
// read where it lies, and the receiver gets the peer's parts back to back in order, whatever
// their sizes, an empty part included. A rank without a partner (the third) takes no part.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "algorithms/comm/mpi_communicator.hpp"

namespace commsgd::comm {
namespace {

// Rank r's parts: 3 + r bytes, none, then 5; each byte names its rank, part and place.
std::array<std::vector<std::byte>, 3> parts_of_rank(int r) {
  std::array<std::vector<std::byte>, 3> parts;
  const std::array<std::size_t, 3> sizes = {3 + static_cast<std::size_t>(r), 0, 5};
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (std::size_t i = 0; i < sizes[p]; ++i) {
      parts[p].push_back(
          static_cast<std::byte>(64 * r + 16 * static_cast<int>(p) + static_cast<int>(i)));
    }
  }
  return parts;
}

std::vector<std::byte> back_to_back(const std::array<std::vector<std::byte>, 3>& parts) {
  std::vector<std::byte> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

TEST(ExchangeMpi, PartsArriveBackToBackAsMessagesOfTheirOwn) {
  MpiCommunicator comm;
  const int peer = comm.rank() ^ 1;
  if (peer >= comm.size()) GTEST_SKIP() << "no partner for rank " << comm.rank();
  const auto mine = parts_of_rank(comm.rank());
  const std::array<std::span<const std::byte>, 3> send = {mine[0], mine[1], mine[2]};
  std::vector<std::byte> received(1000);  // any size before: resized to what arrived

  const CommCounters before = comm.counters();
  comm.exchange(send, peer, received);
  const CommCounters after = comm.counters();

  EXPECT_EQ(received, back_to_back(parts_of_rank(peer)));
  EXPECT_EQ(after.messages_sent - before.messages_sent, 3u);
  EXPECT_EQ(after.messages_received - before.messages_received, 3u);
  EXPECT_EQ(after.bytes_sent - before.bytes_sent, back_to_back(mine).size());
  EXPECT_EQ(after.bytes_received - before.bytes_received, received.size());
}

TEST(ExchangeMpi, OnePartIsTheWholeBuffer) {
  MpiCommunicator comm;
  const int peer = comm.rank() ^ 1;
  if (peer >= comm.size()) GTEST_SKIP() << "no partner for rank " << comm.rank();
  const std::vector<std::byte> mine = back_to_back(parts_of_rank(comm.rank()));
  std::vector<std::byte> received;
  comm.exchange(mine.data(), mine.size(), peer, received);
  EXPECT_EQ(received, back_to_back(parts_of_rank(peer)));
}

}  // namespace
}  // namespace commsgd::comm
