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

// A text scored as the gTop-k and GaussianK-SGD codes score PTB's validation text (their
// ptb_reader.TestDataset in a DataLoader of `batch` windows): windows of `bptt` tokens on a grid
// from token 0, window i's inputs tokens [i·bptt, (i+1)·bptt) and its targets one further; the
// last partial window dropped, and then the last partial batch. Batch j holds windows
// [j·batch, (j+1)·batch), one a column, each scored from a zero state. A rank reads the batches
// j ≡ rank (mod P): which targets are scored, and from what context, do not depend on P.
class TokenWindows {
 public:
  // Throws DataError when the text does not fill one batch, and std::invalid_argument on batch or
  // bptt 0 or a rank outside [0, world_size).
  TokenWindows(std::span<const std::int32_t> tokens, int rank, int world_size, std::size_t batch,
               std::size_t bptt);

  std::size_t streams() const { return batch_; }    // windows a batch
  std::size_t windows() const { return windows_; }  // every rank's
  std::size_t batches() const;                      // this rank's
  std::size_t rows(std::size_t batch) const;        // bptt

  // As TokenStreams::read, for this rank's batch `batch` (its batch rank + batch·P of all).
  void read(std::size_t batch, std::span<std::int64_t> inputs,
            std::span<std::int64_t> targets) const;

 private:
  std::vector<std::int32_t> tokens_;
  std::size_t rank_, world_size_, batch_, bptt_, windows_;
};

}  // namespace commsgd::data
