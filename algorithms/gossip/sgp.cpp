#include "algorithms/gossip/sgp.hpp"

#include "algorithms/stopwatch.hpp"

namespace commsgd::algorithms {

void Sgp::after_step(std::span<float> params) {
  push_sum_.apply_step(params);
  const std::vector<int> out = topology_->out_peers(comm_.rank(), iteration_);
  const std::vector<int> in = topology_->in_peers(comm_.rank(), iteration_);
  const std::size_t n = push_sum_.message_size();
  message_.resize(n);
  received_.resize(in.size() * n);
  push_sum_.split(out.size(), message_);

  std::vector<comm::Outgoing> sends;
  for (const int peer : out) sends.push_back({message_.data(), n * sizeof(float), peer});
  std::vector<comm::Incoming> receives;
  for (std::size_t i = 0; i < in.size(); ++i) {
    receives.push_back({received_.data() + i * n, n * sizeof(float), in[i]});
  }
  const comm::CommCounters before = comm_.counters();
  const Stopwatch watch;
  comm_.send_receive(sends, receives);
  // Synchronous: the whole exchange is time the rank waits instead of computing.
  const double seconds = watch.seconds();
  stats_.communicate_seconds += seconds;
  stats_.wait_seconds += seconds;
  stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
  stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;

  for (std::size_t i = 0; i < in.size(); ++i) {
    push_sum_.absorb(std::span(received_).subspan(i * n, n));
  }
  push_sum_.debias(params);
  stats_.entries_sent += out.size() * params.size();
  stats_.entries_offered += params.size();
  ++iteration_;
}

}  // namespace commsgd::algorithms
