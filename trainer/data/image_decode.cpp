#include "trainer/data/image_decode.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "trainer/data/image_folder_index.hpp"
#include "trainer/data/jpeg_decode.hpp"
#include "trainer/data/png_decode.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

// Every JPEG starts with the SOI marker, FF D8, and its next marker's FF; every PNG with its
// eight-byte signature.
constexpr std::array<unsigned char, 3> kJpegStart{0xFF, 0xD8, 0xFF};
constexpr std::array<unsigned char, 8> kPngStart{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

template <std::size_t N>
bool starts_with(const std::array<unsigned char, 8>& head, std::size_t length,
                 const std::array<unsigned char, N>& magic) {
  return length >= N && std::memcmp(head.data(), magic.data(), N) == 0;
}

}  // namespace

std::unique_ptr<ImageReader> open_image(const fs::path& path) {
  OpenFile file(std::fopen(path.c_str(), "rb"));
  if (!file) throw folder_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::array<unsigned char, 8> head{};
  const std::size_t length = std::fread(head.data(), 1, head.size(), file.get());
  if (std::ferror(file.get())) {
    throw folder_error(path, std::string("cannot read: ") + std::strerror(errno));
  }
  std::rewind(file.get());
  if (starts_with(head, length, kJpegStart))
    return std::make_unique<JpegReader>(path, std::move(file));
  if (starts_with(head, length, kPngStart))
    return std::make_unique<PngReader>(path, std::move(file));
  if (length == 0) throw folder_error(path, "empty file, neither a JPEG nor a PNG");
  std::string first_bytes;
  for (std::size_t i = 0; i < std::min<std::size_t>(length, 2); ++i) {
    first_bytes += fmt::format(" 0x{:02X}", head[i]);
  }
  throw folder_error(path, "neither a JPEG nor a PNG: starts with" + first_bytes);
}

Image decode_image(const fs::path& path) {
  return open_image(path)->decode(1);
}

}  // namespace commsgd::data
