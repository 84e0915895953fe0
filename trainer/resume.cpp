#include "trainer/resume.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/core.h>
#include <torch/utils.h>

#include <cstring>

namespace commsgd::trainer {
namespace {

// LibTorch's default CPU generator (dropout, data order where LibTorch draws it), as bytes.
std::vector<std::byte> torch_rng_state() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const std::lock_guard lock(generator.mutex());
  const at::Tensor state = generator.get_state();
  const auto* begin = reinterpret_cast<const std::byte*>(state.data_ptr<std::uint8_t>());
  return {begin, begin + state.numel()};
}

void set_torch_rng_state(std::span<const std::byte> bytes) {
  at::Tensor state = torch::empty({static_cast<std::int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(state.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const std::lock_guard lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace

std::optional<RankCheckpoint> find_resume_checkpoint(const Options& o, comm::Communicator& comm) {
  const bool newest = o.resume.kind == ResumeFrom::Kind::newest;
  std::vector<std::filesystem::path> candidates = {o.resume.directory};
  if (newest) {
    std::vector<std::int64_t> steps;
    if (comm.rank() == 0) {
      for (const auto& c : checkpoints_newest_first(o.checkpoint_dir)) {
        steps.push_back(checkpoint_step(c));
      }
    }
    std::int64_t count = static_cast<std::int64_t>(steps.size());
    comm.broadcast(std::span(&count, 1), 0);
    steps.resize(static_cast<std::size_t>(count));
    comm.broadcast(std::span(steps), 0);
    candidates.clear();
    for (const std::int64_t step : steps)
      candidates.push_back(checkpoint_path(o.checkpoint_dir, step));
  }
  enum Verdict : std::int64_t { usable = 0, unreadable = 1, mismatched = 2 };
  for (const std::filesystem::path& candidate : candidates) {
    std::int64_t verdict = usable;
    std::string problem;
    std::optional<RankCheckpoint> mine;
    try {
      mine = read_rank_checkpoint(candidate, comm.rank());
      if (mine->world_size != comm.size()) {
        verdict = mismatched;
        problem =
            fmt::format("it was taken with {} workers, not {}", mine->world_size, comm.size());
      } else if (mine->options_hash != computation_hash(o)) {
        verdict = mismatched;
        problem =
            "it was taken with other options (only where to record and checkpoint may change)";
      }
    } catch (const CheckpointError& e) {
      verdict = unreadable;
      problem = e.what();
    }
    std::int64_t worst = verdict;
    comm.allreduce(std::span(&worst, 1), comm::ReduceOp::max);
    if (worst == usable) return mine;
    if (worst == mismatched) {
      throw UsageError(
          fmt::format("--resume: {}: {}", candidate.string(),
                      problem.empty() ? "another rank's file does not match this run" : problem));
    }
    if (!problem.empty()) {
      fmt::print(stderr,
                 "commsgd-train: warning: rank {}: unusable checkpoint: {}; trying an older one\n",
                 comm.rank(), problem);
    }
    if (!newest) {
      throw UsageError(
          fmt::format("--resume: {} cannot be read on every rank", candidate.string()));
    }
  }
  if (comm.rank() == 0) {
    fmt::print(stderr, "commsgd-train: no usable checkpoint in {}: starting from the beginning\n",
               o.checkpoint_dir);
  }
  return std::nullopt;
}

void capture(RankCheckpoint& c, FlatParameters& flat, algorithms::Algorithm& algorithm) {
  c.params = flat.params_on_host();
  flat.buffers_to_host();
  c.buffers = flat.buffers_on_host();
  c.torch_rng = torch_rng_state();
  algorithms::StateWriter state;
  algorithm.save_state(state);
  c.algorithm_state = state.bytes();
}

void restore(const RankCheckpoint& c, FlatParameters& flat, algorithms::Algorithm& algorithm) {
  const auto check_size = [](const std::vector<float>& from, std::size_t size, const char* what) {
    if (from.size() != size) {
      throw CheckpointError(
          fmt::format("checkpoint: {} {} values, the model has {}", what, from.size(), size));
    }
  };
  check_size(c.params, flat.params().size(), "parameters:");
  check_size(c.buffers, flat.buffers().size(), "buffers:");
  flat.set_params(c.params);
  flat.set_buffers(c.buffers);
  flat.buffers_to_device();
  set_torch_rng_state(c.torch_rng);
  algorithms::StateReader state(std::span<const std::byte>(c.algorithm_state));
  algorithm.load_state(state);
}

}  // namespace commsgd::trainer
