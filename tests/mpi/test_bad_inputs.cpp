// The table-driven bad-input test: every row of tests/bad_inputs.tsv through the real
// commsgd-train, started directly (an MPI singleton: one rank, no mpirun), a few at a time; a row
// with {rank} in it runs as two ranks under mpirun, each with its own number there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/torchscript_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

struct BadInput {
  std::string expected;
  std::vector<std::string> args;
};

std::string replace_all(std::string text, const std::string& key, const std::string& value) {
  for (std::size_t at; (at = text.find(key)) != std::string::npos;)
    text.replace(at, key.size(), value);
  return text;
}

std::string substitute(std::string text, const fs::path& dir) {
  return replace_all(replace_all(std::move(text), "{dir}", dir.string()), "{digits}",
                     COMMSGD_DIGITS_CSV);
}

std::vector<BadInput> read_table(const fs::path& dir) {
  std::ifstream in(COMMSGD_BAD_INPUTS);
  std::vector<BadInput> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    BadInput row{line.substr(0, tab), {}};
    std::istringstream args(line.substr(tab + 1));
    for (std::string arg; args >> arg;) row.args.push_back(substitute(arg, dir));
    rows.push_back(std::move(row));
  }
  return rows;
}

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// The broken files the table refers to.
void write_fixtures(const fs::path& dir) {
  write(dir / "ragged.csv", "1,2,3,0\n4,5,1\n");
  write(dir / "letters.csv", "1,2,3,0\n4,x,6,1\n");
  write(dir / "empty.csv", "");
  write(dir / "broken.csv.gz", std::string("\x1f\x8b\x08\x00garbage", 11));
  write(dir / "badmnist" / "train-images-idx3-ubyte", std::string(16, '\x07'));
  write(dir / "badmnist" / "train-labels-idx1-ubyte", std::string(8, '\x07'));
  write(dir / "badmnist" / "t10k-images-idx3-ubyte", std::string(16, '\x07'));
  write(dir / "badmnist" / "t10k-labels-idx1-ubyte", std::string(8, '\x07'));
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                           "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}) {
    write(dir / "badcifar" / name, std::string(3073 + 100, '\x01'));
  }
  // 40 training tokens, and 35 validation tokens: not one window of 35 with its targets.
  std::string train_text, valid_text;
  for (int line = 0; line < 5; ++line) {
    train_text += "a b c d e f g\n";
    valid_text += "a b c d e f\n";
  }
  write(dir / "ptb_short" / "ptb.train.txt", train_text);
  write(dir / "ptb_short" / "ptb.valid.txt", valid_text);
  write(dir / "unknown_key.toml", "batch-size = 8\nbatchsize = 16\n");
  write(dir / "bad_value.toml", "lr = \"fast\"\n");
  write(dir / "plain_file", "not a directory");
  write(dir / "garbage.sqlite", std::string(4096, 'g'));
  write_torchscript_fixtures(dir / "ts");
}

// The command line of a row: commsgd-train alone, or, for a row that names {rank}, two ranks
// under mpirun, each with its own arguments.
std::vector<std::string> command(const BadInput& row, const fs::path& runs) {
  const auto one_rank = [&](const std::string& rank) {
    std::vector<std::string> argv = {COMMSGD_TRAIN};
    for (const std::string& arg : row.args) argv.push_back(replace_all(arg, "{rank}", rank));
    argv.insert(argv.end(), {"--quiet", "--db-dir", runs.string()});
    return argv;
  };
  const bool per_rank = std::ranges::any_of(
      row.args, [](const std::string& arg) { return arg.find("{rank}") != std::string::npos; });
  if (!per_rank) return one_rank("");
  std::vector<std::string> argv = mpirun_base();
  const std::vector<std::string> rank0 = one_rank("0"), rank1 = one_rank("1");
  argv.insert(argv.end(), {"-np", "1"});
  argv.insert(argv.end(), rank0.begin(), rank0.end());
  argv.insert(argv.end(), {":", "-np", "1"});
  argv.insert(argv.end(), rank1.begin(), rank1.end());
  return argv;
}

using BadInputs = TrainerRuns;

TEST_F(BadInputs, EveryRowExitsTwoWithOneLineNamingTheProblem) {
  write_fixtures(dir_);
  const std::vector<BadInput> table = read_table(dir_);
  ASSERT_GE(table.size(), 30u) << "the table in " << COMMSGD_BAD_INPUTS;
  const fs::path runs = dir_ / "runs";
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);  // a singleton started by root, as in CI
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  constexpr std::size_t kAtOnce = 6;
  for (std::size_t first = 0; first < table.size(); first += kAtOnce) {
    std::vector<std::unique_ptr<Process>> batch;
    for (std::size_t i = first; i < std::min(table.size(), first + kAtOnce); ++i) {
      batch.push_back(std::make_unique<Process>(command(table[i], runs)));
    }
    for (std::size_t j = 0; j < batch.size(); ++j) {
      const BadInput& row = table[first + j];
      const ProcessResult r = batch[j]->wait(std::chrono::seconds(120));
      std::string shown;
      for (const auto& a : row.args) shown += a + " ";
      EXPECT_EQ(r.exit_code, 2) << shown << "\n" << r.output;
      const std::string marker = "commsgd-train: error: ";
      const std::size_t at = r.output.find(marker);
      ASSERT_NE(at, std::string::npos) << shown << "\n" << r.output;
      EXPECT_EQ(r.output.find(marker, at + 1), std::string::npos) << "one error line: " << shown;
      const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
      EXPECT_NE(line.find(row.expected), std::string::npos)
          << "expected '" << row.expected << "' in: " << line;
    }
  }
  EXPECT_FALSE(fs::exists(runs)) << "a bad input created a database";
}

}  // namespace
}  // namespace commsgd::testing
