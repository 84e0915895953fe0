#include "algorithms/gossip/dpsgd.hpp"

#include <stdexcept>

#include "algorithms/stopwatch.hpp"

namespace commsgd::algorithms {

Dpsgd::Dpsgd(comm::Communicator& comm, std::unique_ptr<Topology> topology)
    : Gossip(comm, std::move(topology)) {
  if (!topology_->symmetric()) {
    throw std::invalid_argument(
        "--algo dpsgd needs a symmetric --topology "
        "(bipartite-exponential, ring or complete)");
  }
}

void Dpsgd::after_step(std::span<float> params) {
  const std::vector<int> peers = topology_->out_peers(comm_.rank(), iteration_);
  const std::size_t d = params.size();
  received_.resize(peers.size() * d);
  std::vector<comm::Outgoing> sends;
  std::vector<comm::Incoming> receives;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    sends.push_back({params.data(), d * sizeof(float), peers[i]});
    receives.push_back({received_.data() + i * d, d * sizeof(float), peers[i]});
  }
  const comm::CommCounters before = comm_.counters();
  const Stopwatch watch;
  comm_.send_receive(sends, receives);
  const double seconds = watch.seconds();
  stats_.communicate_seconds += seconds;
  stats_.wait_seconds += seconds;
  stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
  stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;

  const float share = 1.0f / static_cast<float>(peers.size() + 1);
  for (std::size_t j = 0; j < d; ++j) {
    float sum = params[j];
    for (std::size_t i = 0; i < peers.size(); ++i) sum += received_[i * d + j];
    params[j] = sum * share;
  }
  stats_.entries_sent += peers.size() * d;
  stats_.entries_offered += d;
  ++iteration_;
}

}  // namespace commsgd::algorithms
