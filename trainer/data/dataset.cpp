#include "trainer/data/dataset.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "trainer/data/loaders.hpp"

namespace commsgd::data {

namespace {

struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFilePtr = std::unique_ptr<gzFile_s, GzFileCloser>;

std::string file_error(std::string_view loader, const std::filesystem::path& file,
                       const std::string& problem) {
  return std::string(loader) + ": " + file.string() + ": " + problem;
}

}  // namespace

std::vector<std::uint8_t> read_file_bytes(std::string_view loader,
                                          const std::filesystem::path& file) {
  // gzopen/gzread pass non-gzip files through unchanged, so one code path
  // serves both plain and .gz inputs.
  errno = 0;
  GzFilePtr gz(gzopen(file.c_str(), "rb"));
  if (!gz) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "cannot open file";
    throw DataError(file_error(loader, file, "cannot open: " + reason));
  }
  constexpr unsigned kChunk = 1U << 20;
  gzbuffer(gz.get(), kChunk);

  std::vector<std::uint8_t> bytes;
  for (;;) {
    const std::size_t old_size = bytes.size();
    bytes.resize(old_size + kChunk);
    const int got = gzread(gz.get(), bytes.data() + old_size, kChunk);
    if (got < 0) {
      throw DataError(
          file_error(loader, file, std::string("read failed: ") + gzerror(gz.get(), nullptr)));
    }
    bytes.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) return bytes;
  }
}

void require_positive_shape(std::string_view loader, std::string_view option,
                            const SampleShape& shape) {
  if (shape.channels < 1 || shape.height < 1 || shape.width < 1) {
    throw DataError(std::string(loader) + ": " + std::string(option) + " {" +
                    std::to_string(shape.channels) + "," + std::to_string(shape.height) + "," +
                    std::to_string(shape.width) + "} must have all dimensions >= 1");
  }
}

namespace {

Dataset load_ptb_corpus(const DatasetOptions& options) {
  Dataset ds;
  ds.name = "ptb";
  ds.text = load_ptb(options.path);
  ds.num_classes = static_cast<int>(ds.text->vocabulary.size());
  return ds;
}

}  // namespace

namespace {

// The options only some data sets take, by the data sets that take them.
constexpr std::array<std::string_view, 1> kCifar10Options = {"--crop-fill"};
constexpr std::array<std::string_view, 1> kCsvOptions = {"--csv-shape"};
constexpr std::array<std::string_view, 5> kImageFolderOptions = {
    "--image-size", "--image-squash", "--resized-crop", "--val-crop-fraction", "--loader-threads"};

}  // namespace

const algorithms::ExtensionTable<DatasetRow>& dataset_table() {
  static const algorithms::ExtensionTable<DatasetRow> table(
      "--dataset", "data set",
      {{.name = "cifar10",
        .summary = "CIFAR-10's binary batches (--data-path: their directory)",
        .make = load_cifar10,
        .augmented_by_default = true,
        .own_options = kCifar10Options},
       {.name = "mnist",
        .summary = "MNIST or Fashion-MNIST IDX files (--data-path: their directory)",
        .make = load_mnist},
       {.name = "csv",
        .summary = "rows of features then a label (--data-path: a .csv or .csv.gz file)",
        .make = load_csv,
        .own_options = kCsvOptions},
       {.name = "synthetic",
        .summary = "generated and learnable (--synthetic-*)",
        .make = load_synthetic,
        .from_path = false},
       {.name = "image-folder",
        .summary = "ImageNet-style class directories of JPEG and PNG files, decoded per batch "
                   "(--data-path: the directory holding train/ and val/)",
        .make = load_image_folder,
        .augmented_by_default = true,
        .own_options = kImageFolderOptions},
       {.name = "ptb",
        .summary = "word-level text, for --model lstm (--data-path: the directory holding "
                   "ptb.train.txt and ptb.valid.txt)",
        .make = load_ptb_corpus,
        .text = true}});
  return table;
}

Dataset load_dataset(const DatasetOptions& options) {
  return dataset_table().find(options.kind).make(options);
}

}  // namespace commsgd::data
