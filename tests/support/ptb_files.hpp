// A small word-level corpus laid out as the Penn Treebank is (DIR/ptb.train.txt, ptb.valid.txt),
// for tests of --dataset ptb and --model lstm.
#pragma once

#include <filesystem>

namespace commsgd::testing {

// Sentences of a small grammar, one per line, drawn from a fixed seed: a noun decides its verb and
// a verb its preposition, so a language model can do far better than word frequencies (about 17
// words). Every word of ptb.valid.txt is also in ptb.train.txt.
void write_ptb_corpus(const std::filesystem::path& dir, int train_lines, int valid_lines);

}  // namespace commsgd::testing
