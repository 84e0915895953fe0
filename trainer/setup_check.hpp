#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "algorithms/comm/communicator.hpp"

namespace commsgd::trainer {

// Setup failed on at least one rank. Every rank throws it; only the lowest failing rank carries
// the message to print (so a job with 64 ranks prints one line, not 64).
class SetupFailed : public std::runtime_error {
 public:
  SetupFailed(const std::string& message, bool reporter)
      : std::runtime_error(message), reporter_(reporter) {}
  bool reporter() const { return reporter_; }

 private:
  bool reporter_;
};

// Collective. Each rank says whether its setup failed; if any did, all of them throw SetupFailed
// together instead of some entering training and waiting forever on the others.
void agree_on_setup(comm::Communicator& comm, const std::optional<std::string>& local_error);

// Collective. Fails setup (as above) unless every rank has the same configuration hash, the same
// parameter count and the same model structure hash as rank 0 — mixed binaries, configs or model
// files would otherwise hang or diverge.
void check_ranks_agree(comm::Communicator& comm, std::uint64_t config_hash,
                       std::uint64_t parameter_count, std::uint64_t structure_hash);

}  // namespace commsgd::trainer
