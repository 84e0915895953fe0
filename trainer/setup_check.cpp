#include "trainer/setup_check.hpp"

#include <fmt/core.h>

#include <array>
#include <vector>

namespace commsgd::trainer {

void agree_on_setup(comm::Communicator& comm, const std::optional<std::string>& local_error) {
  std::int64_t first_failing = local_error ? comm.rank() : comm.size();
  comm.allreduce(std::span(&first_failing, 1), comm::ReduceOp::min);
  if (first_failing == comm.size()) return;
  if (first_failing == comm.rank()) throw SetupFailed(*local_error, true);
  throw SetupFailed(fmt::format("setup failed on rank {}", first_failing), false);
}

void check_ranks_agree(comm::Communicator& comm, std::uint64_t config_hash,
                       std::uint64_t parameter_count, std::uint64_t structure_hash) {
  constexpr std::size_t n = 3;
  const std::array<std::uint64_t, n> mine = {config_hash, parameter_count, structure_hash};
  std::vector<std::uint64_t> all(n * static_cast<std::size_t>(comm.size()));
  comm.allgather(mine.data(), all.data(), sizeof(mine));
  std::optional<std::string> error;
  for (std::size_t r = 1; r < static_cast<std::size_t>(comm.size()) && comm.rank() == 0 && !error;
       ++r) {
    if (all[n * r] != all[0]) {
      error = fmt::format(
          "rank {} was started with a different configuration than rank 0 "
          "(config hash {:016x} vs {:016x})",
          r, all[n * r], all[0]);
    } else if (all[n * r + 1] != all[1]) {
      error = fmt::format("rank {} built a model of {} parameters, rank 0 one of {}", r,
                          all[n * r + 1], all[1]);
    } else if (all[n * r + 2] != all[2]) {
      error = fmt::format(
          "rank {} built a model of another structure than rank 0 (structure hash {:016x} vs "
          "{:016x}; with --model-file, the files differ)",
          r, all[n * r + 2], all[2]);
    }
  }
  agree_on_setup(comm, error);
}

}  // namespace commsgd::trainer
