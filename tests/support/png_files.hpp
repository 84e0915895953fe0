// PNG files for tests of the image-folder data set, written with libpng in each of PNG's colour
// types, so that the decoder's conversions to RGB are tested against values known exactly.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <vector>

namespace commsgd::testing {

enum class PngColour { gray, gray_alpha, rgb, rgb_alpha, palette };

struct PngLayout {
  PngColour colour = PngColour::rgb;
  int bit_depth = 8;  // 1, 2, 4 (gray, palette), 8, 16 (not palette)
  bool interlaced = false;
  std::vector<std::array<int, 3>> palette;  // palette only: its RGB entries
};

// The samples of the pixel at (x, y) in the layout's channel order (gray, alpha; R, G, B, alpha;
// or the palette index first), each below 2^bit_depth; unused ones are ignored.
using SampleFn = std::function<std::array<int, 4>(int x, int y)>;

// Writes a PNG. Throws std::runtime_error if the file cannot be created.
void write_png(const std::filesystem::path& path, int width, int height, const PngLayout& layout,
               const SampleFn& samples);

}  // namespace commsgd::testing
