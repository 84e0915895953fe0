// JPEG files for tests of the image-folder data set, written with libjpeg's compressor.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>

namespace commsgd::testing {

using Color = std::array<int, 3>;
// Up to four component values of the pixel at (x, y).
using PixelFn = std::function<std::array<std::uint8_t, 4>(int x, int y)>;

// Writes a quality-95 JPEG. components: 1 grayscale, 3 RGB, 4 CMYK (libjpeg
// marks it Adobe, so values are stored inverted, as Photoshop writes them:
// 255 = no ink). Throws std::runtime_error if the file cannot be created.
void write_jpeg(const std::filesystem::path& path, int width, int height, int components,
                const PixelFn& pixel);

// An RGB JPEG of one colour.
void write_solid(const std::filesystem::path& path, int width, int height, const Color& color);

}  // namespace commsgd::testing
