// MNIST IDX format: http://yann.lecun.com/exdb/mnist/ (big-endian headers).
#include <array>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>

#include "trainer/data/dataset.hpp"
#include "trainer/data/loaders.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLoader = "mnist";
constexpr SampleShape kShape{1, 28, 28};
constexpr std::uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr std::array<std::uint32_t, 2> kImageDims{28, 28};
constexpr int kClasses = 10;
constexpr float kMean = 0.1307F;
constexpr float kStd = 0.3081F;

DataError file_error(const fs::path& file, const std::string& problem) {
  return DataError(std::string(kLoader) + ": " + file.string() + ": " + problem);
}

std::string hex32(std::uint32_t value) {
  std::array<char, 11> text{};
  std::snprintf(text.data(), text.size(), "0x%08x", value);
  return text.data();
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// The official files are distributed gzipped and often unpacked in place, so
// either form is accepted, preferring the unpacked one.
fs::path locate(const fs::path& dir, const std::string& name) {
  const fs::path plain = dir / name;
  if (fs::exists(plain)) return plain;
  fs::path gz = plain;
  gz += ".gz";
  if (fs::exists(gz)) return gz;
  throw file_error(plain, "file not found (nor " + gz.filename().string() + ")");
}

struct IdxContents {
  std::uint32_t count;                  // first dimension: number of items
  std::span<const std::uint8_t> items;  // count * prod(item_dims) bytes
};

// Validates magic, per-item dimensions and exact file size.
IdxContents parse_idx(const fs::path& file, const std::vector<std::uint8_t>& bytes,
                      std::uint32_t magic, std::span<const std::uint32_t> item_dims) {
  const std::size_t header_bytes = 4 * (2 + item_dims.size());
  if (bytes.size() < 4) throw file_error(file, "too short for an IDX header");
  if (const std::uint32_t found = read_be32(bytes.data()); found != magic) {
    throw file_error(file, "bad IDX magic " + hex32(found) + " (expected " + hex32(magic) + ")");
  }
  if (bytes.size() < header_bytes) throw file_error(file, "truncated IDX header");

  const std::uint32_t count = read_be32(bytes.data() + 4);
  std::size_t item_bytes = 1;
  for (std::size_t d = 0; d < item_dims.size(); ++d) {
    const std::uint32_t dim = read_be32(bytes.data() + 8 + 4 * d);
    if (dim != item_dims[d]) {
      throw file_error(file, "dimension " + std::to_string(d + 1) + " is " + std::to_string(dim) +
                                 " (expected " + std::to_string(item_dims[d]) + ")");
    }
    item_bytes *= dim;
  }
  if (count == 0) throw file_error(file, "contains no items");
  const std::size_t expected = header_bytes + std::size_t{count} * item_bytes;
  if (bytes.size() != expected) {
    throw file_error(file, "size " + std::to_string(bytes.size()) + " bytes, expected " +
                               std::to_string(expected) + " for " + std::to_string(count) +
                               " items");
  }
  return {count, std::span(bytes).subspan(header_bytes)};
}

Split load_split(const fs::path& dir, const std::string& images_name,
                 const std::string& labels_name, bool normalize) {
  const fs::path images_file = locate(dir, images_name);
  const fs::path labels_file = locate(dir, labels_name);
  const std::vector<std::uint8_t> image_bytes = read_file_bytes(kLoader, images_file);
  const std::vector<std::uint8_t> label_bytes = read_file_bytes(kLoader, labels_file);
  const IdxContents images = parse_idx(images_file, image_bytes, kImagesMagic, kImageDims);
  const IdxContents labels = parse_idx(labels_file, label_bytes, kLabelsMagic, {});
  if (images.count != labels.count) {
    throw file_error(labels_file, std::to_string(labels.count) + " labels but " +
                                      images_file.string() + " has " +
                                      std::to_string(images.count) + " images");
  }

  Split split;
  split.labels.reserve(labels.count);
  for (std::size_t i = 0; i < labels.count; ++i) {
    const int label = labels.items[i];
    if (label >= kClasses) {
      throw file_error(labels_file, "item " + std::to_string(i) + " has label " +
                                        std::to_string(label) + " (expected 0..9)");
    }
    split.labels.push_back(label);
  }
  split.features.reserve(images.items.size());
  for (const std::uint8_t pixel : images.items) {
    const float x = static_cast<float>(pixel) / 255.0F;
    split.features.push_back(normalize ? (x - kMean) / kStd : x);
  }
  return split;
}

}  // namespace

Dataset load_mnist(const DatasetOptions& options) {
  const fs::path dir = options.path;
  Dataset ds;
  ds.name = std::string(kLoader);
  ds.shape = kShape;
  ds.num_classes = kClasses;
  ds.train =
      load_split(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", options.normalize);
  ds.validation =
      load_split(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", options.normalize);
  return ds;
}

}  // namespace commsgd::data
