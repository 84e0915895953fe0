// commsgd-train: parse options, start MPI, train, and turn every way of failing into an exit code
// a job script can act on (exit_codes.hpp).
#include "trainer/commsgd_train.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "algorithms/comm/mpi_communicator.hpp"
#include "algorithms/comm/throttled_communicator.hpp"
#include "trainer/build_report.hpp"
#include "trainer/data_check_command.hpp"
#include "trainer/exit_codes.hpp"
#include "trainer/options.hpp"
#include "trainer/setup_check.hpp"
#include "trainer/termination.hpp"
#include "trainer/trainer.hpp"

namespace {

void print_error(const std::string& message) {
  fmt::print(stderr, "commsgd-train: error: {}\n", message);
}

// One line, for the person who runs a paper's config with another algorithm of its paper: what was
// left out of it and why. The run record keeps the same (run_info.cpp).
void print_left_out(const std::map<std::string, std::string>& left_out) {
  std::string text;
  for (const auto& [key, reason] : left_out) {
    text += fmt::format("{}{} ({})", text.empty() ? "" : "; ", key, reason);
  }
  fmt::print(stderr, "commsgd-train: note: left out of the --config file: {}\n", text);
}

}  // namespace

namespace commsgd::trainer {

int commsgd_train_main(int argc, char** argv) {
  termination::install();
  const comm::MpiSession mpi(&argc, &argv);
  comm::MpiCommunicator world;
  const bool rank0 = world.rank() == 0;

  Options options;
  std::optional<std::string> parse_error;
  try {
    const ParseOutcome outcome = parse_options(argc, argv, options, rank0);
    if (outcome == ParseOutcome::exit_ok) return kExitCompleted;
    // One process reads the data set; under a launcher the other ranks leave it to rank 0.
    if (outcome == ParseOutcome::check_data)
      return rank0 ? run_data_check(options) : kExitCompleted;
    if (outcome == ParseOutcome::version || outcome == ParseOutcome::check_build) {
      if (rank0) {
        for (const std::string& line : build_report(outcome == ParseOutcome::check_build))
          fmt::print("{}\n", line);
      }
      return kExitCompleted;
    }
    if (rank0 && !options.left_out.empty()) print_left_out(options.left_out);
  } catch (const UsageError& e) {
    parse_error = e.what();
  }

  try {
    agree_on_setup(world, parse_error);
    std::optional<comm::ThrottledCommunicator> throttled;
    comm::Communicator& comm = options.emulate_link_mbps > 0
                                   ? throttled.emplace(world, options.emulate_link_mbps)
                                   : static_cast<comm::Communicator&>(world);
    const TrainingResult result = train(options, comm, world.placement());
    if (result.stopped_by_signal != 0) {
      if (rank0) {
        fmt::print(
            stderr, "commsgd-train: stopped by SIG{} after {} iterations, checkpoint in {}\n",
            sigabbrev_np(result.stopped_by_signal), result.iterations, options.checkpoint_dir);
      }
      return kExitSignalBase + result.stopped_by_signal;
    }
    if (rank0 && !options.quiet) {
      fmt::print(
          "run {} completed: {} iterations, val top-1 {:.2f}%, val loss {:.4f}\n"
          "record: {}\n",
          result.run_id, result.iterations, 100 * result.val_top1, result.val_loss,
          result.database.string());
    }
    return kExitCompleted;
  } catch (const SetupFailed& e) {
    if (e.reporter()) print_error(e.what());
    return kExitBadInput;
  } catch (const TrainingFailed&) {
    if (world.size() > 1) world.abort(kExitFailed);
    return kExitFailed;
  } catch (const std::exception& e) {
    print_error(fmt::format("rank {}: {}", world.rank(), e.what()));
    // A peer may be blocked in a collective this rank will never join: end the whole job.
    if (world.size() > 1) world.abort(kExitFailed);
    return kExitFailed;
  }
}

}  // namespace commsgd::trainer
