// image-loader: commsgd's image-folder loader over a folder, one pass in training mode (decode,
// random-resized crop, flip, normalise to S x S), on --threads decoding threads; prints the
// images per second. tests/bench/loader_vs_torchvision.py runs it beside torchvision's
// ImageFolder and DataLoader on the same files and records the ratio.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "tests/bench/benchmarks.hpp"
#include "trainer/data/image_folder.hpp"

namespace commsgd::bench {
namespace {

struct LoaderSettings {
  std::string folder;  // root/<class>/<image>
  std::size_t threads = 1;
  std::size_t batch_size = 32;
  int image_size = 224;
  std::uint64_t seed = 1;
};

void run(const LoaderSettings& s) {
  const data::ImageFolder folder = data::index_image_folder(s.folder);
  std::vector<std::uint32_t> order(folder.size());
  std::iota(order.begin(), order.end(), 0U);
  data::ImageFolderLoader loader(folder, {.output_size = s.image_size,
                                          .threads = s.threads,
                                          .prefetch = 2,
                                          .mode = data::ImageMode::train});
  const auto start = std::chrono::steady_clock::now();
  loader.start_epoch(order, s.batch_size, s.seed);
  std::size_t images = 0;
  for (data::ImageBatch batch; loader.next(batch);) images += batch.size();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("image-loader: {} images in {:.3f} s on {} threads: images_per_s {:.1f}\n", images,
             seconds, s.threads, static_cast<double>(images) / seconds);
}

}  // namespace

void add_image_loader(CLI::App& app) {
  auto settings = std::make_shared<LoaderSettings>();
  CLI::App* cmd = app.add_subcommand(
      "image-loader", "Images per second of the image-folder loader in training mode, one pass");
  cmd->add_option("--folder", settings->folder, "A split's folder: <folder>/<class>/<image>")
      ->required();
  cmd->add_option("--threads", settings->threads, "Decoding threads")->check(CLI::PositiveNumber);
  cmd->add_option("--batch-size", settings->batch_size, "Images a batch")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--image-size", settings->image_size, "Output side S")
      ->check(CLI::PositiveNumber);
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
