#include "trainer/data/text_corpus.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "trainer/data/dataset.hpp"

namespace commsgd::data {

namespace {

DataError file_error(const std::filesystem::path& file, const std::string& problem) {
  return DataError("ptb: " + file.string() + ": " + problem);
}

class Tokenizer {
 public:
  // grow: words not seen before get new ids; otherwise they are an error.
  std::vector<std::int32_t> read(const std::filesystem::path& file, bool grow) {
    std::ifstream in(file);
    if (!in) throw file_error(file, "cannot open");
    std::vector<std::int32_t> tokens;
    std::string line, word;
    std::size_t line_number = 0;
    while (std::getline(in, line)) {
      ++line_number;
      std::istringstream words(line);
      while (words >> word) tokens.push_back(id(word, grow, file, line_number));
      tokens.push_back(id("<eos>", grow, file, line_number));
    }
    if (in.bad()) throw file_error(file, "read failed");
    if (tokens.size() == line_number) throw file_error(file, "holds no words");  // only <eos>
    return tokens;
  }

  std::vector<std::string> vocabulary;

 private:
  std::int32_t id(const std::string& word, bool grow, const std::filesystem::path& file,
                  std::size_t line) {
    const auto [it, added] = ids_.try_emplace(word, static_cast<std::int32_t>(vocabulary.size()));
    if (added) {
      if (!grow) {
        throw file_error(file, "line " + std::to_string(line) + ": '" + word +
                                   "' is not in the training file's vocabulary");
      }
      vocabulary.push_back(word);
    }
    return it->second;
  }

  std::unordered_map<std::string, std::int32_t> ids_;
};

}  // namespace

TextCorpus load_ptb(const std::filesystem::path& dir) {
  Tokenizer tokenizer;
  TextCorpus corpus;
  corpus.train = tokenizer.read(dir / "ptb.train.txt", true);
  corpus.validation = tokenizer.read(dir / "ptb.valid.txt", false);
  corpus.vocabulary = std::move(tokenizer.vocabulary);
  return corpus;
}

TokenStreams::TokenStreams(std::span<const std::int32_t> tokens, int rank, int world_size,
                           std::size_t streams, std::size_t bptt)
    : streams_(streams), bptt_(bptt) {
  if (streams == 0 || bptt == 0) {
    throw std::invalid_argument("TokenStreams: streams and bptt must be >= 1");
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw std::invalid_argument("TokenStreams: rank outside [0, world_size)");
  }
  const std::size_t share = tokens.size() / static_cast<std::size_t>(world_size);
  length_ = share / streams;
  if (length_ < 2) {
    throw DataError("ptb: " + std::to_string(tokens.size()) + " tokens over " +
                    std::to_string(world_size) + " workers do not give " + std::to_string(streams) +
                    " streams 2 tokens each");
  }
  const auto first = tokens.begin() + static_cast<std::ptrdiff_t>(share) * rank;
  columns_.assign(first, first + static_cast<std::ptrdiff_t>(length_ * streams));
}

std::size_t TokenStreams::rows(std::size_t batch) const {
  if (batch >= batches()) {
    throw std::out_of_range("TokenStreams: batch " + std::to_string(batch) + " of " +
                            std::to_string(batches()));
  }
  return std::min(bptt_, length_ - 1 - batch * bptt_);
}

void TokenStreams::read(std::size_t batch, std::span<std::int64_t> inputs,
                        std::span<std::int64_t> targets) const {
  const std::size_t n = rows(batch);
  if (inputs.size() != n * streams_ || targets.size() != n * streams_) {
    throw std::invalid_argument("TokenStreams: batch " + std::to_string(batch) + " holds " +
                                std::to_string(n * streams_) + " tokens");
  }
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t row = batch * bptt_ + t;
    for (std::size_t s = 0; s < streams_; ++s) {
      inputs[t * streams_ + s] = columns_[s * length_ + row];
      targets[t * streams_ + s] = columns_[s * length_ + row + 1];
    }
  }
}

TokenWindows::TokenWindows(std::span<const std::int32_t> tokens, int rank, int world_size,
                           std::size_t batch, std::size_t bptt)
    : tokens_(tokens.begin(), tokens.end()), batch_(batch), bptt_(bptt) {
  if (batch == 0 || bptt == 0)
    throw std::invalid_argument("TokenWindows: batch and bptt must be >= 1");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw std::invalid_argument("TokenWindows: rank outside [0, world_size)");
  }
  rank_ = static_cast<std::size_t>(rank);
  world_size_ = static_cast<std::size_t>(world_size);
  // TestDataset.__len__: len // num_steps windows, less the last partial batch. Where the text's
  // length is a multiple of bptt, the last window's targets would run one token past the end (the
  // original's DataLoader fails there); that window is dropped first.
  std::size_t windows = tokens.size() / bptt;
  if (windows * bptt + 1 > tokens.size() && windows > 0) --windows;
  windows_ = windows - windows % batch;
  if (windows_ == 0) {
    throw DataError("ptb: " + std::to_string(tokens.size()) + " tokens do not fill one batch of " +
                    std::to_string(batch) + " windows of " + std::to_string(bptt));
  }
}

std::size_t TokenWindows::batches() const {
  const std::size_t all = windows_ / batch_;
  return all / world_size_ + (rank_ < all % world_size_ ? 1 : 0);
}

std::size_t TokenWindows::rows(std::size_t batch) const {
  if (batch >= batches()) {
    throw std::out_of_range("TokenWindows: batch " + std::to_string(batch) + " of " +
                            std::to_string(batches()));
  }
  return bptt_;
}

void TokenWindows::read(std::size_t batch, std::span<std::int64_t> inputs,
                        std::span<std::int64_t> targets) const {
  const std::size_t n = rows(batch);
  if (inputs.size() != n * batch_ || targets.size() != n * batch_) {
    throw std::invalid_argument("TokenWindows: batch " + std::to_string(batch) + " holds " +
                                std::to_string(n * batch_) + " tokens");
  }
  const std::size_t first_window = (rank_ + batch * world_size_) * batch_;
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t w = 0; w < batch_; ++w) {
      const std::size_t at = (first_window + w) * bptt_ + t;
      inputs[t * batch_ + w] = tokens_[at];
      targets[t * batch_ + w] = tokens_[at + 1];
    }
  }
}

}  // namespace commsgd::data
