// commsgd-train --check-data on every kind of data set the tests have: 0 and a summary when the
// files are good, 2 and a line naming each bad file when not; and a run on a folder of every
// image kind ImageNet holds (JPEG, a PNG named .JPEG, CMYK, grayscale, palette) trains to the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/jpeg_files.hpp"
#include "tests/support/png_files.hpp"
#include "tests/support/ptb_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

using CheckData = TrainerRuns;

// commsgd-train --check-data args..., one process, no launcher: as a user runs it.
ProcessResult check(std::vector<std::string> args) {
  args.insert(args.begin(), {COMMSGD_TRAIN, "--check-data"});
  return run_process(args, std::chrono::seconds(120));
}

std::size_t count_lines_starting(const std::string& output, const std::string& prefix) {
  std::size_t count = 0;
  for (std::size_t at = 0; at < output.size();) {
    const std::size_t end = std::min(output.find('\n', at), output.size());
    if (output.compare(at, prefix.size(), prefix) == 0) ++count;
    at = end + 1;
  }
  return count;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Image i of a class: five kinds in turn, each of the class's hue under a little noise.
void write_image(const fs::path& dir, int i, const Color& color) {
  const auto channel = [&](int x, int y, std::size_t c) {
    return std::clamp(color[c] + ((x * 7 + y * 13 + i * 5) % 9) * 3 - 12, 0, 255);
  };
  const std::string stem = dir / ("img" + std::to_string(i));
  switch (i % 5) {
    case 0:  // RGB JPEG
      write_jpeg(stem + ".JPEG", 28, 22, 3, [&](int x, int y) {
        return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(channel(x, y, 0)),
                                           static_cast<std::uint8_t>(channel(x, y, 1)),
                                           static_cast<std::uint8_t>(channel(x, y, 2)), 0};
      });
      return;
    case 1:  // a PNG named .JPEG, as ILSVRC-2012's n02105855_2933.JPEG
      write_png(stem + ".JPEG", 30, 20, {}, [&](int x, int y) {
        return std::array<int, 4>{channel(x, y, 0), channel(x, y, 1), channel(x, y, 2), 0};
      });
      return;
    case 2:  // CMYK JPEG, stored inverted as Adobe's applications write it
      write_jpeg(stem + ".JPEG", 24, 24, 4, [&](int x, int y) {
        return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(channel(x, y, 0)),
                                           static_cast<std::uint8_t>(channel(x, y, 1)),
                                           static_cast<std::uint8_t>(channel(x, y, 2)), 255};
      });
      return;
    case 3:  // grayscale JPEG
      write_jpeg(stem + ".JPEG", 26, 20, 1, [&](int x, int y) {
        return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(channel(x, y, 0))};
      });
      return;
    default:  // palette PNG: the class's colour and a darker one
      write_png(stem + ".png", 20, 26,
                {testing::PngColour::palette,
                 8,
                 false,
                 {{color[0], color[1], color[2]}, {color[0] / 2, color[1] / 2, color[2] / 2}}},
                [](int x, int y) { return std::array<int, 4>{(x + y) % 2}; });
  }
}

const Color kGreen{50, 190, 60};

void write_mixed_folder(const fs::path& root) {
  const std::vector<std::pair<std::string, Color>> classes{
      {"blue", {40, 60, 200}}, {"green", kGreen}, {"red", {210, 50, 40}}};
  for (const auto& [split, count] : {std::pair{"train", 10}, {"val", 5}}) {
    for (const auto& [name, color] : classes) {
      fs::create_directories(root / split / name);
      for (int i = 0; i < count; ++i) write_image(root / split / name, i, color);
    }
  }
}

TEST_F(CheckData, AFolderOfEveryImageKindIsGoodAndTrainsToTheEnd) {
  const fs::path root = dir_ / "images";
  write_mixed_folder(root);
  const std::vector<std::string> data{"--dataset",    "image-folder", "--data-path", root.string(),
                                      "--image-size", "12",           "--model",     "mlp"};
  const ProcessResult checked = check(data);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_NE(checked.output.find("check-data: good: 30 training and 15 validation samples, 45 "
                                "images decoded"),
            std::string::npos)
      << checked.output;

  std::vector<std::string> args = data;
  const fs::path db = dir_ / "runs.sqlite";
  args.insert(args.end(), {"--mlp-hidden", "16", "--epochs", "2", "--batch-size", "5", "--lr",
                           "0.05", "--threads", "1", "--db", db.string()});
  const ProcessResult r = train(2, args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto runs = query(db, "select status from runs");
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0][0], "completed");
}

TEST_F(CheckData, ListsEveryBadImageWithItsClassAndFailsTheRunNamingIt) {
  const fs::path root = dir_ / "images";
  write_mixed_folder(root);
  const fs::path truncated = root / "train" / "green" / "img0.JPEG";
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  const fs::path text = root / "val" / "red" / "notes.JPEG";
  write_bytes(text, "this is a text file");
  const std::vector<std::string> data{"--dataset",    "image-folder", "--data-path", root.string(),
                                      "--image-size", "12",           "--model",     "mlp"};
  for (const char* threads : {"1", "3"}) {
    std::vector<std::string> args = data;
    args.insert(args.end(), {"--loader-threads", threads});
    const ProcessResult r = check(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(count_lines_starting(r.output, "bad: "), 2U) << r.output;
    EXPECT_NE(r.output.find("bad: image-folder: " + truncated.string() + ": "), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("bad: image-folder: " + text.string() +
                            ": neither a JPEG nor a PNG: starts with 0x74 0x68"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("bad in class train/green: 1 of 10"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("bad in class val/red: 1 of 6"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("check-data: 2 bad of 46 images"), std::string::npos) << r.output;
  }
  // A run reaches each bad file in its first epoch and fails naming it: the truncated JPEG in
  // training, and once that is mended, the text file in validation.
  for (const fs::path& bad : {truncated, text}) {
    if (bad == text) write_image(truncated.parent_path(), 0, kGreen);
    std::vector<std::string> args = data;
    const fs::path db = dir_ / ("runs-" + bad.stem().string() + ".sqlite");
    args.insert(args.end(),
                {"--epochs", "1", "--batch-size", "5", "--threads", "1", "--db", db.string()});
    const ProcessResult r = train(2, args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find(bad.string()), std::string::npos) << r.output;
    const auto runs = query(db, "select status, exit_reason from runs");
    ASSERT_EQ(runs.size(), 1U);
    EXPECT_EQ(runs[0][0], "failed");
    EXPECT_NE(runs[0][1].find(bad.string()), std::string::npos) << runs[0][1];
  }
}

TEST_F(CheckData, ReadsEveryInMemoryDataSetKind) {
  // Good: the digits CSV, Fashion-MNIST, a small CIFAR-10 and a small PTB.
  write_ptb_corpus(dir_ / "ptb", 40, 10);
  const fs::path cifar = dir_ / "cifar";
  fs::create_directories(cifar);
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                           "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}) {
    write_bytes(cifar / name, std::string(3 * 3073, '\x02'));
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> good{
      {{"--dataset", "csv", "--data-path", COMMSGD_DIGITS_CSV, "--csv-shape", "1,8,8"},
       "1438 training and 359 validation samples"},
      {{"--dataset", "mnist", "--data-path", COMMSGD_FASHION_MNIST_DIR, "--model", "lenet"},
       "60000 training and 10000 validation samples"},
      {{"--dataset", "cifar10", "--data-path", cifar.string()},
       "15 training and 3 validation samples"},
      {{"--dataset", "ptb", "--data-path", (dir_ / "ptb").string(), "--model", "lstm"},
       "validation tokens"},
  };
  for (const auto& [args, summary] : good) {
    const ProcessResult r = check(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(summary), std::string::npos) << r.output;
  }
  // Bad: a CSV row with a word for a number, an MNIST label file whose IDX magic is wrong (an
  // unpacked file is preferred to the .gz beside it), a CIFAR-10 batch cut short and an empty PTB
  // validation file, each named.
  const fs::path csv = dir_ / "table.csv";
  write_bytes(csv, "a,b,label\n0.5,1.5,0\n0.25,seven,1\n1,2,0\n");
  const fs::path mnist = dir_ / "mnist";
  fs::copy(COMMSGD_FASHION_MNIST_DIR, mnist);
  write_bytes(mnist / "t10k-labels-idx1-ubyte", std::string("\0\0\x08\x02\0\0\0\x01\x03", 9));
  fs::resize_file(cifar / "data_batch_3.bin", 2 * 3073 + 100);
  write_bytes(dir_ / "ptb" / "ptb.valid.txt", "");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
      {{"--dataset", "csv", "--data-path", csv.string()}, csv.string() + ": line 3: column 2"},
      {{"--dataset", "mnist", "--data-path", mnist.string(), "--model", "lenet"},
       (mnist / "t10k-labels-idx1-ubyte").string() + ": bad IDX magic"},
      {{"--dataset", "cifar10", "--data-path", cifar.string()},
       (cifar / "data_batch_3.bin").string()},
      {{"--dataset", "ptb", "--data-path", (dir_ / "ptb").string(), "--model", "lstm"},
       (dir_ / "ptb" / "ptb.valid.txt").string()},
  };
  for (const auto& [args, named] : bad) {
    const ProcessResult r = check(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(count_lines_starting(r.output, "bad: "), 1U) << r.output;
    EXPECT_NE(r.output.find(named), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace commsgd::testing
