#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/text_corpus.hpp"

namespace commsgd::data {
namespace {

namespace fs = std::filesystem;

using commsgd::testing::TempDir;

void write(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

// Success iff `f` throws a DataError whose message is one line naming `text`.
template <typename F>
::testing::AssertionResult FailsNaming(F f, const std::string& text) {
  try {
    f();
  } catch (const DataError& error) {
    const std::string message = error.what();
    if (message.rfind("ptb: ", 0) != 0 || message.find('\n') != std::string::npos ||
        message.find(text) == std::string::npos) {
      return ::testing::AssertionFailure() << "bad message: " << message;
    }
    return ::testing::AssertionSuccess() << message;
  }
  return ::testing::AssertionFailure() << "no DataError";
}

TEST(LoadPtb, NumbersWordsInOrderOfFirstAppearanceAndEndsEachLine) {
  TempDir dir;
  write(dir.path() / "ptb.train.txt", " the cat <unk> sat\n\nthe  dog\tsat \n");
  write(dir.path() / "ptb.valid.txt", "the dog sat\n");
  DatasetOptions options;
  options.kind = "ptb";
  options.path = dir.path().string();
  const Dataset ds = load_dataset(options);
  ASSERT_TRUE(ds.text);
  const TextCorpus& text = *ds.text;
  EXPECT_EQ(text.vocabulary,
            (std::vector<std::string>{"the", "cat", "<unk>", "sat", "<eos>", "dog"}));
  // An empty line is one <eos>, as in PyTorch's example.
  EXPECT_EQ(text.train, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 4, 0, 5, 3, 4}));
  EXPECT_EQ(text.validation, (std::vector<std::int32_t>{0, 5, 3, 4}));
  EXPECT_EQ(ds.num_classes, 6);
  EXPECT_EQ(ds.train_size(), 10U);
  EXPECT_EQ(ds.validation_size(), 4U);
}

TEST(LoadPtb, RejectsMissingAndEmptyFilesAndUnknownValidationWords) {
  TempDir dir;
  EXPECT_TRUE(FailsNaming([&] { load_ptb(dir.path()); }, "ptb.train.txt: cannot open"));
  write(dir.path() / "ptb.train.txt", "\n\n");
  write(dir.path() / "ptb.valid.txt", "a b\n");
  EXPECT_TRUE(FailsNaming([&] { load_ptb(dir.path()); }, "ptb.train.txt: holds no words"));
  write(dir.path() / "ptb.train.txt", "a b\nc\n");
  write(dir.path() / "ptb.valid.txt", "a b\nb d\n");
  EXPECT_TRUE(FailsNaming([&] { load_ptb(dir.path()); },
                          "ptb.valid.txt: line 2: 'd' is not in the training file's vocabulary"));
}

std::vector<std::int32_t> iota(std::size_t n) {
  std::vector<std::int32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), 0);
  return tokens;
}

TEST(TokenStreams, CutsEachRanksShareIntoColumnsReadInBpttRows) {
  // 50 tokens over 2 ranks: 25 each; rank 1's are 25..49, 3 columns of 8 (one dropped).
  const std::vector<std::int32_t> tokens = iota(50);
  const TokenStreams streams(tokens, 1, 2, 3, 3);
  EXPECT_EQ(streams.full_batches(), 2U);  // 7 input rows: 3 + 3, then 1
  EXPECT_EQ(streams.batches(), 3U);
  EXPECT_EQ(streams.rows(2), 1U);
  std::vector<std::int64_t> inputs(9), targets(9);
  streams.read(1, inputs, targets);
  // Columns start at 25, 33 and 41; batch 1 is rows 3..5.
  EXPECT_EQ(inputs, (std::vector<std::int64_t>{28, 36, 44, 29, 37, 45, 30, 38, 46}));
  EXPECT_EQ(targets, (std::vector<std::int64_t>{29, 37, 45, 30, 38, 46, 31, 39, 47}));
  inputs.resize(3);
  targets.resize(3);
  streams.read(2, inputs, targets);
  EXPECT_EQ(inputs, (std::vector<std::int64_t>{31, 39, 47}));
  EXPECT_EQ(targets, (std::vector<std::int64_t>{32, 40, 48}));
  EXPECT_THROW(streams.read(3, inputs, targets), std::out_of_range);
  EXPECT_THROW(streams.read(1, inputs, targets), std::invalid_argument);
}

TEST(TokenStreams, RejectsSharesTooShortAndBadArguments) {
  const std::vector<std::int32_t> tokens = iota(12);
  EXPECT_NO_THROW(TokenStreams(tokens, 0, 2, 3, 5));  // 6 tokens: 3 columns of 2
  EXPECT_THROW(TokenStreams(tokens, 0, 2, 4, 5), DataError);
  EXPECT_THROW(TokenStreams(tokens, 0, 2, 0, 5), std::invalid_argument);
  EXPECT_THROW(TokenStreams(tokens, 0, 2, 3, 0), std::invalid_argument);
  EXPECT_THROW(TokenStreams(tokens, 2, 2, 3, 5), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::data
