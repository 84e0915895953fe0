// CIFAR-10 binary format: https://www.cs.toronto.edu/~kriz/cifar.html
#include <array>
#include <filesystem>
#include <string>

#include "trainer/data/dataset.hpp"
#include "trainer/data/loaders.hpp"

namespace commsgd::data {

namespace {

constexpr std::string_view kLoader = "cifar10";
constexpr SampleShape kShape{3, 32, 32};
constexpr std::size_t kPixelsPerChannel = 32 * 32;
constexpr std::size_t kImageBytes = 3 * kPixelsPerChannel;
constexpr std::size_t kRecordBytes = 1 + kImageBytes;  // label byte, then the image
constexpr int kClasses = 10;
constexpr std::array<float, 3> kMean{0.4914F, 0.4822F, 0.4465F};
constexpr std::array<float, 3> kStd{0.2470F, 0.2435F, 0.2616F};

// A byte of channel c as the loader stores it: in [0, 1], then standardized when normalizing.
float stored_value(std::uint8_t byte, std::size_t channel, bool normalize) {
  const float x = static_cast<float>(byte) / 255.0F;
  return normalize ? (x - kMean[channel]) / kStd[channel] : x;
}

DataError batch_error(const std::filesystem::path& file, const std::string& problem) {
  return DataError(std::string(kLoader) + ": " + file.string() + ": " + problem);
}

void append_batch(const std::filesystem::path& file, bool normalize, Split& split) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(kLoader, file);
  if (bytes.empty()) throw batch_error(file, "file is empty");
  if (bytes.size() % kRecordBytes != 0) {
    throw batch_error(file, "size " + std::to_string(bytes.size()) + " is not a multiple of " +
                                std::to_string(kRecordBytes) + " bytes per record");
  }
  const std::size_t records = bytes.size() / kRecordBytes;
  split.labels.reserve(split.labels.size() + records);
  split.features.reserve(split.features.size() + records * kImageBytes);

  for (std::size_t r = 0; r < records; ++r) {
    const std::uint8_t* record = bytes.data() + r * kRecordBytes;
    const int label = record[0];
    if (label >= kClasses) {
      throw batch_error(file, "record " + std::to_string(r) + " has label " +
                                  std::to_string(label) + " (expected 0..9)");
    }
    split.labels.push_back(label);
    for (std::size_t i = 0; i < kImageBytes; ++i) {
      split.features.push_back(stored_value(record[1 + i], i / kPixelsPerChannel, normalize));
    }
  }
}

}  // namespace

Dataset load_cifar10(const DatasetOptions& options) {
  const std::filesystem::path dir = options.path;
  Dataset dataset;
  dataset.name = kLoader;
  dataset.shape = kShape;
  dataset.num_classes = kClasses;
  for (std::size_t c = 0; c < kMean.size(); ++c) {
    dataset.black.push_back(stored_value(0, c, options.normalize));
  }
  for (int batch = 1; batch <= 5; ++batch) {
    append_batch(dir / ("data_batch_" + std::to_string(batch) + ".bin"), options.normalize,
                 dataset.train);
  }
  append_batch(dir / "test_batch.bin", options.normalize, dataset.validation);
  return dataset;
}

}  // namespace commsgd::data
