// Checkpoint files: one per rank per checkpoint, DIR/step-<next iteration>/rank-<r>.ckpt, each
// written to a temporary name, flushed to disk and renamed, and ending in a CRC-32 of its
// contents. A checkpoint directory keeps the two newest checkpoints, so a torn or corrupted
// newest one leaves the previous one to resume from.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace commsgd::trainer {

// A checkpoint file that cannot be used: missing, truncated, failing its checksum, or of another
// run or rank. what() says which and why.
class CheckpointError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where training stands between two iterations: the next iteration to run.
struct TrainingPosition {
  long step = 0;  // global iteration, counting from the run's start
  int epoch = 0;
  long iteration_in_epoch = 0;
  double elapsed_seconds = 0;  // wall time of the run so far, for the record's wall_seconds
};

// Everything one rank needs to continue exactly.
struct RankCheckpoint {
  std::string run_id;
  int rank = 0;
  int world_size = 0;
  std::uint64_t options_hash = 0;  // of the options that change what is computed
  TrainingPosition position;
  std::vector<float> params, buffers, momentum;
  std::vector<float> model_state;  // what a language model carries between batches
  std::uint64_t augment_rng = 0;
  std::array<double, 3> train_sums{};  // the epoch's loss, correct and samples so far
  std::vector<std::byte> torch_rng;    // LibTorch's CPU generator (dropout)
  std::vector<std::byte> algorithm_state;
};

std::filesystem::path checkpoint_path(const std::filesystem::path& root, long step);  // the dir
std::filesystem::path rank_file(const std::filesystem::path& checkpoint, int rank);

// The step a checkpoint's directory is named after; -1 if it is not named step-N.
long checkpoint_step(const std::filesystem::path& checkpoint);

// The checkpoints under `root`, newest first (by step).
std::vector<std::filesystem::path> checkpoints_newest_first(const std::filesystem::path& root);

// Writes this rank's file of `checkpoint` atomically; throws std::runtime_error on I/O errors.
void write_rank_checkpoint(const std::filesystem::path& checkpoint, const RankCheckpoint& state);
// Reads and verifies this rank's file; throws CheckpointError when it cannot be used.
RankCheckpoint read_rank_checkpoint(const std::filesystem::path& checkpoint, int rank);
// Removes all checkpoints under `root` but the `keep` newest.
void prune_checkpoints(const std::filesystem::path& root, std::size_t keep);

}  // namespace commsgd::trainer
