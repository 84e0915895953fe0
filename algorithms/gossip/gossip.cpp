#include "algorithms/gossip/gossip.hpp"

#include <algorithm>

#include "algorithms/stopwatch.hpp"

namespace commsgd::algorithms {

void exchange_in_slices(comm::Communicator& comm, std::span<const float> message,
                        const std::vector<int>& out, const std::vector<int>& in,
                        std::vector<float>& scratch, const SliceArrived& arrived, RoundHead head,
                        std::size_t slice) {
  scratch.resize(in.size() * std::min(slice, message.size()));
  std::vector<comm::Outgoing> sends;
  std::vector<comm::Incoming> receives;
  for_each_slice(message.size(), slice, [&](std::size_t offset, std::size_t count) {
    const std::size_t bytes = count * sizeof(float);
    sends.clear();
    receives.clear();
    for (const int peer : out) sends.push_back({message.data() + offset, bytes, peer});
    for (std::size_t i = 0; i < in.size(); ++i) {
      receives.push_back({scratch.data() + i * count, bytes, in[i]});
    }
    // Between two ranks, messages match in the order they were posted: the head follows the
    // first slice on both sides.
    if (offset == 0 && !head.send.empty()) {
      const std::size_t n = head.send.size();
      for (const int peer : out) sends.push_back({head.send.data(), n * sizeof(float), peer});
      for (std::size_t i = 0; i < in.size(); ++i) {
        receives.push_back({head.received.data() + i * n, n * sizeof(float), in[i]});
      }
    }
    comm.send_receive(sends, receives);
    arrived(offset, count, std::span<const float>(scratch).first(in.size() * count));
  });
}

void Gossip::mix_round(std::span<const float> message, const std::vector<int>& out,
                       const std::vector<int>& in, const SliceArrived& arrived, RoundHead head) {
  const comm::CommCounters before = comm_.counters();
  const Stopwatch watch;
  double mixing = 0;  // what the rank computes with the slices is not communication
  exchange_in_slices(
      comm_, message, out, in, scratch_,
      [&](std::size_t offset, std::size_t count, std::span<const float> received) {
        const Stopwatch mix;
        arrived(offset, count, received);
        mixing += mix.seconds();
      },
      head);
  const double seconds = watch.seconds() - mixing;
  stats_.communicate_seconds += seconds;
  stats_.wait_seconds += seconds;
  stats_.bytes_sent += comm_.counters().bytes_sent - before.bytes_sent;
  stats_.bytes_received += comm_.counters().bytes_received - before.bytes_received;
  stats_.entries_sent += out.size() * (message.size() + head.send.size());
}

void Gossip::begin_evaluation(Buffer<float> buffer, bool own_model) {
  const std::span<float> params = buffer.host("the gossip family");
  if (!own_model) keep_own_model(params);
  consensus_.measure(params, comm_, !own_model);
}

void Gossip::keep_own_model(std::span<const float> params) {
  own_model_ = idle_buffer();
  own_model_.assign(params.begin(), params.end());
}

void Gossip::restore_own_model(std::span<float> params) {
  if (own_model_.empty()) return;
  std::copy(own_model_.begin(), own_model_.end(), params.begin());
  return_idle_buffer(std::move(own_model_));
  own_model_ = {};
}

}  // namespace commsgd::algorithms
