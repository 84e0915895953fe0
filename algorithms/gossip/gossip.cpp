#include "algorithms/gossip/gossip.hpp"

#include <algorithm>

#include "algorithms/stopwatch.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {

void exchange_in_slices(comm::Communicator& comm, Buffer<const float> message,
                        const std::vector<int>& out, const std::vector<int>& in,
                        kernels::ops::Storage<float>& scratch, const SliceArrived& arrived,
                        RoundHead head, std::size_t slice) {
  const kernels::Place place = message.place();
  scratch.resize(in.size() * std::min(slice, message.size()), place);
  const Buffer<float> arriving = scratch.buffer();
  std::vector<comm::Outgoing> sends;
  std::vector<comm::Incoming> receives;
  for_each_slice(message.size(), slice, [&](std::size_t offset, std::size_t count) {
    const std::size_t bytes = count * sizeof(float);
    sends.clear();
    receives.clear();
    for (const int peer : out) sends.push_back({message.data() + offset, bytes, peer});
    for (std::size_t i = 0; i < in.size(); ++i) {
      receives.push_back({arriving.data() + i * count, bytes, in[i]});
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
    comm.send_receive(sends, receives, place);
    arrived(offset, count, arriving.subspan(0, in.size() * count));
  });
}

void Gossip::mix_round(Buffer<const float> message, const std::vector<int>& out,
                       const std::vector<int>& in, const SliceArrived& arrived, RoundHead head) {
  if (barrier_) {
    const Stopwatch waiting;
    comm_.barrier();
    stats_.wait_seconds += waiting.seconds();
  }
  const TrafficMeter traffic(comm_);
  const Stopwatch watch;
  double mixing = 0;  // what the rank computes with the slices is not communication
  exchange_in_slices(
      comm_, message, out, in, scratch_,
      [&](std::size_t offset, std::size_t count, Buffer<const float> received) {
        const Stopwatch mix;
        arrived(offset, count, received);
        mixing += mix.seconds();
      },
      head);
  comm_.synchronize(message.place());
  stats_.communicate_seconds += watch.seconds() - mixing;
  traffic.add_to(stats_.bytes_sent, stats_.bytes_received);
  stats_.entries_sent += out.size() * (message.size() + head.send.size());
}

void Gossip::begin_evaluation(Buffer<float> params, bool own_model) {
  if (!own_model) keep_own_model(params);
  consensus_.measure(params, comm_, !own_model);
}

void Gossip::keep_own_model(Buffer<const float> params) {
  own_model_ = idle_buffer();
  own_model_.resize(params.size(), params.place());
  kernels::ops::copy(params, own_model_.buffer());
}

void Gossip::restore_own_model(Buffer<float> params) {
  if (own_model_.size() == 0) return;
  kernels::ops::copy(own_model_.buffer(), params);
  return_idle_buffer(std::move(own_model_));
  own_model_ = {};
}

}  // namespace commsgd::algorithms
