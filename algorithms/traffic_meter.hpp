#pragma once

#include <cstdint>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::algorithms {

// The bytes a communicator moved from this meter's making on, for an algorithm to charge to its
// own statistics: the one place where the communicator's counters are read.
class TrafficMeter {
 public:
  explicit TrafficMeter(const comm::Communicator& comm) : comm_(comm), before_(comm.counters()) {}
  // sent += bytes sent since, received += bytes received since.
  void add_to(std::uint64_t& sent, std::uint64_t& received) const {
    sent += comm_.counters().bytes_sent - before_.bytes_sent;
    received += comm_.counters().bytes_received - before_.bytes_received;
  }

 private:
  const comm::Communicator& comm_;
  comm::CommCounters before_;
};

}  // namespace commsgd::algorithms
