#include "algorithms/gossip/gossip.hpp"

#include "algorithms/stopwatch.hpp"

namespace commsgd::algorithms {

void exchange_with_peers(comm::Communicator& comm, std::span<const float> message,
                         const std::vector<int>& out, const std::vector<int>& in,
                         std::vector<float>& received) {
  const std::size_t n = message.size();
  received.resize(in.size() * n);
  std::vector<comm::Outgoing> sends;
  for (const int peer : out) sends.push_back({message.data(), n * sizeof(float), peer});
  std::vector<comm::Incoming> receives;
  for (std::size_t i = 0; i < in.size(); ++i) {
    receives.push_back({received.data() + i * n, n * sizeof(float), in[i]});
  }
  comm.send_receive(sends, receives);
}

void Gossip::mix_round(std::span<const float> message, const std::vector<int>& out,
                       const std::vector<int>& in, std::vector<float>& received) {
  const comm::CommCounters before = comm_.counters();
  const Stopwatch watch;
  exchange_with_peers(comm_, message, out, in, received);
  const double seconds = watch.seconds();
  stats_.communicate_seconds += seconds;
  stats_.wait_seconds += seconds;
  stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
  stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;
  stats_.entries_sent += out.size() * message.size();
}

}  // namespace commsgd::algorithms
