#include "tests/support/jpeg_files.hpp"

// jpeglib.h uses FILE and size_t without including their headers.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on

#include <stdexcept>
#include <vector>

namespace commsgd::testing {

void write_jpeg(const std::filesystem::path& path, int width, int height, int components,
                const PixelFn& pixel) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("write_jpeg: cannot create " + path.string());
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, file);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = components;
  cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 95, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<JSAMPLE> row(static_cast<std::size_t>(width * components));
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::array<std::uint8_t, 4> values = pixel(x, y);
      for (int c = 0; c < components; ++c) {
        row[static_cast<std::size_t>(x * components + c)] = values[c];
      }
    }
    JSAMPROW row_pointer = row.data();
    jpeg_write_scanlines(&cinfo, &row_pointer, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(file);
}

void write_solid(const std::filesystem::path& path, int width, int height, const Color& color) {
  write_jpeg(path, width, height, 3, [&](int, int) {
    return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(color[0]),
                                       static_cast<std::uint8_t>(color[1]),
                                       static_cast<std::uint8_t>(color[2]), 0};
  });
}

}  // namespace commsgd::testing
