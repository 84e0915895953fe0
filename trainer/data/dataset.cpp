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

Dataset load_dataset(const DatasetOptions& options) {
  if (options.kind == "cifar10") return load_cifar10(options);
  if (options.kind == "mnist") return load_mnist(options);
  if (options.kind == "csv") return load_csv(options);
  if (options.kind == "synthetic") return load_synthetic(options);
  if (options.kind == "image-folder") return load_image_folder(options);
  if (options.kind == "ptb") {
    Dataset ds;
    ds.name = "ptb";
    ds.text = load_ptb(options.path);
    ds.num_classes = static_cast<int>(ds.text->vocabulary.size());
    return ds;
  }
  throw DataError("dataset: unknown kind '" + options.kind +
                  "' (expected cifar10, mnist, csv, synthetic, image-folder or ptb)");
}

}  // namespace commsgd::data
