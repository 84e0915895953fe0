#include "trainer/data/dataset.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

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

const algorithms::ExtensionTable<DatasetRow>& dataset_table() {
  static const algorithms::ExtensionTable<DatasetRow> table(
      "--dataset", "data set",
      {{"cifar10", "CIFAR-10's binary batches (--data-path: their directory)", load_cifar10},
       {"mnist", "MNIST or Fashion-MNIST IDX files (--data-path: their directory)", load_mnist},
       {"csv", "rows of features then a label (--data-path: a .csv or .csv.gz file)", load_csv},
       {"synthetic", "generated and learnable (--synthetic-*)", load_synthetic},
       {"image-folder",
        "ImageNet-style JPEG class directories, decoded per batch (--data-path: the directory "
        "holding train/ and val/)",
        load_image_folder},
       {"ptb",
        "word-level text, for --model lstm (--data-path: the directory holding "
        "ptb.train.txt and ptb.valid.txt)",
        load_ptb_corpus}});
  return table;
}

Dataset load_dataset(const DatasetOptions& options) {
  if (const DatasetRow* row = dataset_table().lookup(options.kind)) return row->make(options);
  throw DataError("dataset: unknown kind '" + options.kind + "' (expected " +
                  dataset_table().choices() + ")");
}

}  // namespace commsgd::data
