// Word-level text for language models: the Penn Treebank as Mikolov distributes it
// (ptb.train.txt, ptb.valid.txt, one sentence per line, rare words already <unk>), and the
// batches truncated back-propagation through time reads from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace commsgd::data {

struct TextCorpus {
  std::vector<std::string> vocabulary;  // token id i is vocabulary[i]
  std::vector<std::int32_t> train, validation;
};

// Reads DIR/ptb.train.txt and DIR/ptb.valid.txt as PyTorch's word_language_model example does:
// each line split at whitespace and ended by "<eos>", ids given in order of first appearance,
// the training file first. Throws DataError ("ptb: <file>: <problem>") for a file that cannot be
// read or holds no word, and for a validation file whose words are not all in the training file's
// vocabulary (the model could never predict them).
TextCorpus load_ptb(const std::filesystem::path& dir);

// A rank's contiguous share (1/P, the remainder dropped) of a token stream, cut into `streams`
// equal columns read side by side, as in the example's batchify(): column s continues from one
// batch to the next, which is what lets a recurrent model carry its state across batches.
// Batch b holds rows [b·bptt, b·bptt + rows(b)) of the columns as inputs and the rows one further
// as targets (the next word).
class TokenStreams {
 public:
  // Throws DataError when the share does not give each column at least 2 tokens, and
  // std::invalid_argument on streams or bptt 0 or a rank outside [0, world_size).
  TokenStreams(std::span<const std::int32_t> tokens, int rank, int world_size, std::size_t streams,
               std::size_t bptt);

  std::size_t streams() const { return streams_; }
  std::size_t full_batches() const { return (length_ - 1) / bptt_; }         // of bptt rows each
  std::size_t batches() const { return (length_ - 1 + bptt_ - 1) / bptt_; }  // the last partial
  std::size_t rows(std::size_t batch) const;

  // inputs and targets are [rows(batch), streams] row-major (sequence first, as LibTorch's LSTM
  // takes it), and must hold exactly that many values. Throws std::out_of_range on batch >=
  // batches(), std::invalid_argument on wrong sizes.
  void read(std::size_t batch, std::span<std::int64_t> inputs,
            std::span<std::int64_t> targets) const;

 private:
  std::vector<std::int32_t> columns_;  // streams_ columns of length_ tokens, column after column
  std::size_t streams_, bptt_, length_;
};

}  // namespace commsgd::data
