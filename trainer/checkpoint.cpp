#include "trainer/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "algorithms/state.hpp"

namespace commsgd::trainer {
namespace {

namespace fs = std::filesystem;
using algorithms::StateReader;
using algorithms::StateWriter;

constexpr std::array<char, 8> kMagic = {'C', 'S', 'G', 'D', 'C', 'K', 'P', 'T'};
constexpr std::uint32_t kFormatVersion = 3;  // 3: push-sum keeps its numerator in the parameters

std::uint32_t crc32_of(std::span<const std::byte> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes lengths as uInt: feed large buffers in pieces.
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes = bytes.subspan(n);
  }
  return static_cast<std::uint32_t>(crc);
}

// write() all of it, then fsync: the rename that follows must not publish a partial file.
void write_file_durably(const fs::path& file, std::span<const std::byte> bytes) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("checkpoint: cannot create {}: {}", file.string(), std::strerror(errno)));
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(
          fmt::format("checkpoint: cannot write {}: {}", file.string(), std::strerror(error)));
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) {
    throw std::runtime_error(
        fmt::format("checkpoint: cannot flush {}: {}", file.string(), std::strerror(errno)));
  }
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: some file systems do not allow it
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

long checkpoint_step(const fs::path& checkpoint) {
  const std::string name = checkpoint.filename().string();
  if (!name.starts_with("step-") || name.size() == 5) return -1;
  const std::string digits = name.substr(5);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}

fs::path checkpoint_path(const fs::path& root, long step) {
  return root / fmt::format("step-{:010}", step);
}

fs::path rank_file(const fs::path& checkpoint, int rank) {
  return checkpoint / fmt::format("rank-{:05}.ckpt", rank);
}

std::vector<fs::path> checkpoints_newest_first(const fs::path& root) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(root, error)) {
    if (e.is_directory() && checkpoint_step(e.path()) >= 0) found.push_back(e.path());
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return checkpoint_step(a) > checkpoint_step(b);
  });
  return found;
}

void write_rank_checkpoint(const fs::path& checkpoint, const RankCheckpoint& s) {
  StateWriter out;
  out.write(kMagic);
  out.write(kFormatVersion);
  out.write(std::string_view(s.run_id));
  out.write(s.rank);
  out.write(s.world_size);
  out.write(s.options_hash);
  out.write(s.position);
  out.write(std::span<const float>(s.params));
  out.write(std::span<const float>(s.buffers));
  out.write(std::span<const float>(s.momentum));
  out.write(std::span<const float>(s.model_state));
  out.write(s.augment_rng);
  out.write(s.train_sums);
  out.write(std::span<const std::byte>(s.torch_rng));
  out.write(std::span<const std::byte>(s.algorithm_state));
  out.write(crc32_of(out.bytes()));

  fs::create_directories(checkpoint);
  const fs::path file = rank_file(checkpoint, s.rank);
  fs::path temporary = file;
  temporary += ".tmp";
  write_file_durably(temporary, out.bytes());
  fs::rename(temporary, file);
  sync_directory(checkpoint);
}

RankCheckpoint read_rank_checkpoint(const fs::path& checkpoint, int rank) {
  const fs::path file = rank_file(checkpoint, rank);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CheckpointError(fmt::format("{}: missing", file.string()));
  std::vector<std::byte> bytes(fs::file_size(file));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in || bytes.size() < sizeof(kMagic) + 2 * sizeof(std::uint32_t)) {
    throw CheckpointError(fmt::format("{}: truncated", file.string()));
  }
  const std::span<const std::byte> body = std::span(bytes).first(bytes.size() - 4);
  std::uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + body.size(), sizeof(stored));
  if (std::memcmp(body.data(), kMagic.data(), kMagic.size()) != 0) {
    throw CheckpointError(fmt::format("{}: not a commsgd checkpoint", file.string()));
  }
  if (crc32_of(body) != stored) {
    throw CheckpointError(
        fmt::format("{}: checksum mismatch (truncated or corrupted)", file.string()));
  }
  try {
    StateReader in_state(body.subspan(sizeof(kMagic)));
    if (const auto version = in_state.read<std::uint32_t>(); version != kFormatVersion) {
      throw CheckpointError(fmt::format("{}: format version {}, this build reads {}", file.string(),
                                        version, kFormatVersion));
    }
    RankCheckpoint s;
    s.run_id = in_state.read_text();
    s.rank = in_state.read<int>();
    s.world_size = in_state.read<int>();
    s.options_hash = in_state.read<std::uint64_t>();
    s.position = in_state.read<TrainingPosition>();
    in_state.read(s.params);
    in_state.read(s.buffers);
    in_state.read(s.momentum);
    in_state.read(s.model_state);
    s.augment_rng = in_state.read<std::uint64_t>();
    s.train_sums = in_state.read<std::array<double, 3>>();
    s.torch_rng = in_state.read_bytes();
    s.algorithm_state = in_state.read_bytes();
    if (!in_state.done() || s.rank != rank) {
      throw CheckpointError(fmt::format("{}: malformed", file.string()));
    }
    return s;
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const CheckpointError*>(&e) != nullptr) throw;
    throw CheckpointError(fmt::format("{}: {}", file.string(), e.what()));
  }
}

void prune_checkpoints(const fs::path& root, std::size_t keep) {
  const std::vector<fs::path> all = checkpoints_newest_first(root);
  for (std::size_t i = keep; i < all.size(); ++i) {
    std::error_code ignored;  // another rank of a shared directory may be removing it too
    fs::remove_all(all[i], ignored);
  }
}

}  // namespace commsgd::trainer
