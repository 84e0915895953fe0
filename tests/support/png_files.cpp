#include "tests/support/png_files.hpp"

#include <png.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace commsgd::testing {

namespace {

int channels_of(PngColour colour) {
  switch (colour) {
    case PngColour::gray:
    case PngColour::palette:
      return 1;
    case PngColour::gray_alpha:
      return 2;
    case PngColour::rgb:
      return 3;
    case PngColour::rgb_alpha:
      return 4;
  }
  return 0;
}

int colour_type_of(PngColour colour) {
  switch (colour) {
    case PngColour::gray:
      return PNG_COLOR_TYPE_GRAY;
    case PngColour::gray_alpha:
      return PNG_COLOR_TYPE_GRAY_ALPHA;
    case PngColour::rgb:
      return PNG_COLOR_TYPE_RGB;
    case PngColour::rgb_alpha:
      return PNG_COLOR_TYPE_RGB_ALPHA;
    case PngColour::palette:
      return PNG_COLOR_TYPE_PALETTE;
  }
  return 0;
}

}  // namespace

// libpng's default error handler prints and longjmps to the setjmp below; the file is then
// abandoned, which is all a test helper needs.
void write_png(const std::filesystem::path& path, int width, int height, const PngLayout& layout,
               const SampleFn& samples) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("write_png: cannot create " + path.string());
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  const int channels = channels_of(layout.colour);
  const int bytes_per_sample = layout.bit_depth == 16 ? 2 : 1;
  // One sample a byte below 8 bits: png_set_packing packs them as they are written.
  std::vector<png_byte> row(static_cast<std::size_t>(width * channels * bytes_per_sample));
  std::vector<png_color> palette;
  for (const auto& [r, g, b] : layout.palette) {
    palette.push_back(
        {static_cast<png_byte>(r), static_cast<png_byte>(g), static_cast<png_byte>(b)});
  }
  if (setjmp(png_jmpbuf(png)) != 0) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    throw std::runtime_error("write_png: libpng failed on " + path.string());
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
               layout.bit_depth, colour_type_of(layout.colour),
               layout.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  png_write_info(png, info);
  if (layout.bit_depth < 8) png_set_packing(png);
  // Adam7 writes every row in each of its seven passes.
  const int passes = png_set_interlace_handling(png);
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < height; ++y) {
      std::size_t at = 0;
      for (int x = 0; x < width; ++x) {
        const std::array<int, 4> values = samples(x, y);
        for (int c = 0; c < channels; ++c) {
          if (bytes_per_sample == 2) row[at++] = static_cast<png_byte>(values[c] >> 8);
          row[at++] = static_cast<png_byte>(values[c] & 0xFF);
        }
      }
      png_write_row(png, row.data());
    }
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  std::fclose(file);
}

}  // namespace commsgd::testing
