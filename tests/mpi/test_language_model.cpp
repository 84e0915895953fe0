// commsgd-train's language model (--model lstm on --dataset ptb): truncated BPTT over each rank's
// share of the text, perplexity recorded per epoch, with dense and sparse synchronization.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "tests/support/ptb_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

using LanguageModel = TrainerRuns;

TEST_F(LanguageModel, PerplexityFallsFarBelowWordFrequenciesWithDenseAndTopk) {
  write_ptb_corpus(dir_ / "ptb", 1500, 150);
  const std::string db = (dir_ / "lm.sqlite").string();
  for (const char* algo : {"dense", "topk"}) {
    const ProcessResult r = train(2, {"--algo",
                                      algo,
                                      "--density",
                                      "0.05",
                                      "--dataset",
                                      "ptb",
                                      "--data-path",
                                      (dir_ / "ptb").string(),
                                      "--model",
                                      "lstm",
                                      "--lstm-hidden",
                                      "32",
                                      "--lstm-layers",
                                      "2",
                                      "--lstm-dropout",
                                      "0.1",
                                      "--bptt",
                                      "10",
                                      "--batch-size",
                                      "8",
                                      "--eval-batch-size",
                                      "4",
                                      "--epochs",
                                      "5",
                                      "--lr",
                                      "1",
                                      "--momentum",
                                      "0.9",
                                      "--weight-decay",
                                      "0",
                                      "--clip-grad-norm",
                                      "0.25",
                                      "--threads",
                                      "1",
                                      "--db",
                                      db});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto rows = query(db,
                          "select r.algo, r.status, r.dataset, e.epoch, e.val_perplexity, "
                          "e.val_loss from runs r join epochs e on e.run_id = r.id "
                          "order by r.created_at, e.epoch");
  ASSERT_EQ(rows.size(), 10U);
  for (const auto& row : rows) {
    EXPECT_EQ(row[1], "completed");
    EXPECT_EQ(row[2], "ptb");
    // Perplexity is exp of the mean loss per token.
    EXPECT_NEAR(std::stod(row[4]), std::exp(std::stod(row[5])), 1e-6 * std::stod(row[4]));
  }
  for (const std::size_t last : {4U, 9U}) {
    const double first = std::stod(rows[last - 4][4]), final = std::stod(rows[last][4]);
    std::cout << rows[last][0] << ": validation perplexity " << first << " after epoch 0, " << final
              << " after epoch 4\n";
    // 17 words: a model of word frequencies alone scores about 11; the grammar leaves about 2.
    EXPECT_LT(final, 4.0) << rows[last][0];
    EXPECT_LT(final, first) << rows[last][0];
  }
}

// The model held at its initial parameters (an lr of 1e-30 moves no float32 weight), validated at
// P = 1, 2 and 4: as the originals score (--eval-windows) every P scores the same targets from the
// same context, so the loss is the same; as streams of each rank's share, it is not.
TEST_F(LanguageModel, ValidationAsTheOriginalsScoresTheSameWhateverTheRanks) {
  write_ptb_corpus(dir_ / "ptb", 60, 40);
  const std::string db = (dir_ / "lm.sqlite").string();
  for (const char* scoring : {"--eval-windows", "--eval-reset-state"}) {
    for (const int ranks : {1, 2, 4}) {
      const ProcessResult r = train(ranks, {"--dataset",
                                            "ptb",
                                            "--data-path",
                                            (dir_ / "ptb").string(),
                                            "--model",
                                            "lstm",
                                            "--lstm-hidden",
                                            "16",
                                            "--lstm-layers",
                                            "1",
                                            "--bptt",
                                            "7",
                                            "--batch-size",
                                            "4",
                                            "--eval-batch-size",
                                            "5",
                                            scoring,
                                            "--epochs",
                                            "1",
                                            "--lr",
                                            "1e-30",
                                            "--momentum",
                                            "0",
                                            "--threads",
                                            "1",
                                            "--db",
                                            db});
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
  }
  const auto rows = query(db,
                          "select r.workers, e.val_loss from runs r join epochs e "
                          "on e.run_id = r.id order by r.created_at");
  ASSERT_EQ(rows.size(), 6U);
  const auto loss = [&](std::size_t i) { return std::stod(rows[i][1]); };
  for (const std::size_t i : {1U, 2U}) {
    // The same batches on every P; only the order in which the ranks' sums are added differs.
    EXPECT_NEAR(loss(i), loss(0), 1e-12 * loss(0)) << "--eval-windows at P = " << rows[i][0];
  }
  for (const std::size_t i : {4U, 5U}) {
    EXPECT_GT(std::abs(loss(i) - loss(3)), 1e-7 * loss(3)) << "streams at P = " << rows[i][0];
  }
}

TEST_F(LanguageModel, TextTooShortForTheStreamsIsOneClearError) {
  // 70 training and 35 validation tokens (7 a line).
  write_ptb_corpus(dir_ / "ptb", 10, 5);
  const std::vector<std::string> args = {
      "--dataset", "ptb",  "--data-path",   (dir_ / "ptb").string(),
      "--model",   "lstm", "--lstm-hidden", "8",
      "--bptt",    "35",   "--db",          (dir_ / "x.sqlite").string()};
  for (const auto& [more, message] :
       {std::pair<std::vector<std::string>, std::string>{{"--batch-size", "4"},
                                                         "--eval-batch-size 256: the text (35 "
                                                         "tokens over 2 workers) is too short"},
        {{"--batch-size", "4", "--eval-batch-size", "2"}, "--bptt 35 is longer than"},
        {{"--batch-size", "30", "--eval-batch-size", "2"}, "--batch-size 30: the text"}}) {
    std::vector<std::string> with = args;
    with.insert(with.end(), more.begin(), more.end());
    const ProcessResult r = train(2, with);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace commsgd::testing
