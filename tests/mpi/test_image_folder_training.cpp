// commsgd-train on an ImageNet-style folder of JPEG class directories (--dataset image-folder),
// written by the test: images decoded per batch by the prefetching loader on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "tests/support/jpeg_files.hpp"
#include "tests/support/trainer_runs.hpp"

namespace commsgd::testing {
namespace {

namespace fs = std::filesystem;

using ImageFolderTraining = TrainerRuns;

// root/{train,val}/<class>/*.jpg: each class a hue (red, green, blue) under per-pixel noise, in
// images of several sizes and aspect ratios, so crops and resizing are exercised.
void write_folder(const fs::path& root, int train_per_class, int val_per_class) {
  const std::vector<std::pair<std::string, Color>> classes{
      {"blue", {40, 60, 200}}, {"green", {50, 190, 60}}, {"red", {210, 50, 40}}};
  std::uint32_t noise = 12345;
  for (const auto& [split, count] : {std::pair{"train", train_per_class}, {"val", val_per_class}}) {
    for (const auto& [name, color] : classes) {
      fs::create_directories(root / split / name);
      for (int i = 0; i < count; ++i) {
        const int width = 24 + 8 * (i % 3), height = 20 + 6 * (i % 4);
        write_jpeg(root / split / name / ("img" + std::to_string(i) + ".jpg"), width, height, 3,
                   [&](int, int) {
                     std::array<std::uint8_t, 4> pixel{};
                     for (std::size_t c = 0; c < 3; ++c) {
                       noise = noise * 1664525U + 1013904223U;
                       const int value = color[c] + static_cast<int>(noise >> 27) * 4 - 60;
                       pixel[c] = static_cast<std::uint8_t>(std::clamp(value, 0, 255));
                     }
                     return pixel;
                   });
      }
    }
  }
}

std::vector<std::string> folder_args(const fs::path& root, const fs::path& db,
                                     const fs::path& params) {
  return {"--dataset",     "image-folder",
          "--data-path",   root.string(),
          "--image-size",  "12",
          "--model",       "mlp",
          "--mlp-hidden",  "32",
          "--epochs",      "4",
          "--batch-size",  "8",
          "--lr",          "0.05",
          "--threads",     "1",
          "--db",          db.string(),
          "--dump-params", params.string()};
}

TEST_F(ImageFolderTraining, LearnsTheClassesAndDoesNotDependOnLoaderThreads) {
  const fs::path root = dir_ / "images";
  write_folder(root, 32, 8);
  const fs::path db = dir_ / "runs.sqlite";
  std::vector<std::string> one_thread = folder_args(root, db, dir_ / "one.bin");
  one_thread.insert(one_thread.end(), {"--loader-threads", "1"});
  std::vector<std::string> three_threads = folder_args(root, db, dir_ / "three.bin");
  three_threads.insert(three_threads.end(), {"--loader-threads", "3"});
  for (const auto& args : {one_thread, three_threads}) {
    const ProcessResult r = train(2, args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  const auto runs = query(db,
                          "select r.status, r.dataset, e.val_top1 from runs r join epochs e "
                          "on e.run_id = r.id and e.epoch = 3 order by r.created_at");
  ASSERT_EQ(runs.size(), 2U);
  for (const auto& run : runs) {
    EXPECT_EQ(run[0], "completed");
    EXPECT_EQ(run[1], "image-folder");
    // 24 validation images, 8 per hue: the hues are easy to tell apart.
    EXPECT_GE(std::stod(run[2]), 0.9);
    std::cout << "validation top-1 after 4 epochs: " << run[2] << "\n";
  }
  // Each sample's crop and flip are drawn from (seed, epoch, sample), never from thread timing.
  const std::vector<float> a = read_floats(dir_ / "one.bin"), b = read_floats(dir_ / "three.bin");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
      << "the parameters depend on --loader-threads";
}

}  // namespace
}  // namespace commsgd::testing
