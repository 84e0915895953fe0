#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <string>
#include <utility>
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

// Every (input position, target position) pair the ranks of a P-rank run score, each window's
// inputs checked to be consecutive from a multiple of bptt: the originals' grid.
std::vector<std::pair<std::int64_t, std::int64_t>> scored_pairs(
    const std::vector<std::int32_t>& tokens, int world_size, std::size_t batch, std::size_t bptt) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (int rank = 0; rank < world_size; ++rank) {
    const TokenWindows windows(tokens, rank, world_size, batch, bptt);
    std::vector<std::int64_t> inputs(batch * bptt), targets(batch * bptt);
    for (std::size_t b = 0; b < windows.batches(); ++b) {
      windows.read(b, inputs, targets);
      for (std::size_t w = 0; w < batch; ++w) {
        const std::int64_t start = inputs[w];
        EXPECT_EQ(start % static_cast<std::int64_t>(bptt), 0) << "window " << w;
        for (std::size_t t = 0; t < bptt; ++t) {
          EXPECT_EQ(inputs[t * batch + w], start + static_cast<std::int64_t>(t));
          pairs.emplace_back(inputs[t * batch + w], targets[t * batch + w]);
        }
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

TEST(TokenWindows, ScoresTheOriginalsTargetsWhateverTheRanks) {
  // The originals' rule by hand: 1000 tokens in windows of 7 give 1000 // 7 = 142 windows (the
  // last one's targets end at token 994); batches of 4 windows keep 140; 980 targets, tokens 1 to
  // 980, each predicted from its own window's tokens only.
  const std::vector<std::int32_t> tokens = iota(1000);
  std::vector<std::pair<std::int64_t, std::int64_t>> expected;
  for (std::int64_t p = 0; p < 980; ++p) expected.emplace_back(p, p + 1);
  for (const int world_size : {1, 2, 4}) {
    EXPECT_EQ(TokenWindows(tokens, 0, world_size, 4, 7).windows(), 140U);
    EXPECT_EQ(scored_pairs(tokens, world_size, 4, 7), expected) << "P = " << world_size;
  }
  // 35 batches over 4 ranks: 9, 9, 9 and 8.
  EXPECT_EQ(TokenWindows(tokens, 2, 4, 4, 7).batches(), 9U);
  EXPECT_EQ(TokenWindows(tokens, 3, 4, 4, 7).batches(), 8U);
}

TEST(TokenWindows, DropsAWindowWhoseLastTargetIsPastTheEnd) {
  // 280 tokens: 40 windows of 7, but the 40th's last target would be token 280; 39, then 36.
  EXPECT_EQ(TokenWindows(iota(280), 0, 1, 4, 7).windows(), 36U);
  EXPECT_EQ(TokenWindows(iota(281), 0, 1, 4, 7).windows(), 40U);
}

TEST(TokenWindows, RejectsTextsShorterThanABatchAndBadArguments) {
  const std::vector<std::int32_t> tokens = iota(29);  // 4 windows of 7, the 4th's end is token 28
  EXPECT_NO_THROW(TokenWindows(tokens, 0, 1, 4, 7));
  EXPECT_TRUE(FailsNaming([&] { TokenWindows(iota(28), 0, 1, 4, 7); }, "28 tokens"));
  EXPECT_NO_THROW(TokenWindows(tokens, 1, 2, 4, 7));  // a rank with no batch scores none
  EXPECT_EQ(TokenWindows(tokens, 1, 2, 4, 7).batches(), 0U);
  EXPECT_THROW(TokenWindows(tokens, 0, 1, 0, 7), std::invalid_argument);
  EXPECT_THROW(TokenWindows(tokens, 0, 1, 4, 0), std::invalid_argument);
  EXPECT_THROW(TokenWindows(tokens, 1, 1, 4, 7), std::invalid_argument);
  std::vector<std::int64_t> inputs(28), targets(28);
  EXPECT_THROW(TokenWindows(tokens, 0, 1, 4, 7).read(1, inputs, targets), std::out_of_range);
}

}  // namespace
}  // namespace commsgd::data
