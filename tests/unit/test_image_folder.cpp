#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/jpeg_files.hpp"
#include "tests/support/png_files.hpp"
#include "tests/support/temp_dir.hpp"
#include "trainer/data/batch_reader.hpp"
#include "trainer/data/image_folder.hpp"

namespace commsgd::data {
namespace {

namespace fs = std::filesystem;

using commsgd::testing::Color;
using commsgd::testing::PngColour;
using commsgd::testing::PngLayout;
using commsgd::testing::TempDir;
using commsgd::testing::write_jpeg;
using commsgd::testing::write_png;
using commsgd::testing::write_solid;

constexpr std::array<float, 3> kMean{0.485F, 0.456F, 0.406F};
constexpr std::array<float, 3> kStd{0.229F, 0.224F, 0.225F};
// JPEG is lossy: a decoded flat colour may be off by a few levels.
constexpr int kLevelTolerance = 6;

// Red rises from left to right, green from top to bottom.
void write_gradient(const fs::path& path, int width, int height) {
  write_jpeg(path, width, height, 3, [&](int x, int y) {
    return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(x * 255 / (width - 1)),
                                       static_cast<std::uint8_t>(y * 255 / (height - 1)), 100, 0};
  });
}

// Noise compresses badly, so the entropy-coded data is most of the file and
// cutting it in half truncates the image data, not the headers.
void write_truncated(const fs::path& path) {
  write_jpeg(path, 64, 64, 3, [](int x, int y) {
    const auto v = static_cast<std::uint8_t>((x * 7919 + y * 104729) * 2654435761U >> 24);
    return std::array<std::uint8_t, 4>{v, static_cast<std::uint8_t>(v * 3), 77, 0};
  });
  fs::resize_file(path, fs::file_size(path) / 2);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

struct ExpectedFile {
  fs::path path;
  std::int32_t label;
  int width, height;
  Color color;
};

// Three classes, created out of order, of four images each, with names whose
// sorted order differs from creation order and from case-insensitive order.
// bee/img1.jpg is grayscale; ant/img3.JPEG is a PNG, as ImageNet's n02105855_2933.JPEG.
// Files without an image's extension are ignored.
std::vector<ExpectedFile> make_folder(const fs::path& root) {
  const std::vector<std::pair<std::string, Color>> classes{
      {"cat", {30, 60, 200}}, {"ant", {200, 40, 40}}, {"bee", {40, 180, 60}}};
  const std::array<std::string, 4> names{"img3.JPEG", "img1.jpg", "IMG2.jpeg", "img0.JPG"};
  const std::array<std::pair<int, int>, 4> sizes{{{40, 30}, {64, 64}, {30, 40}, {48, 36}}};
  for (const auto& [name, color] : classes) {
    fs::create_directories(root / name);
    write_text(root / name / "notes.txt", "not an image");
    write_text(root / name / "thumb.gif", "not read");
    for (std::size_t i = 0; i < names.size(); ++i) {
      const fs::path file = root / name / names[i];
      const auto [width, height] = sizes[i];
      if (name == "bee" && names[i] == "img1.jpg") {
        write_jpeg(file, width, height, 1,
                   [](int, int) { return std::array<std::uint8_t, 4>{128}; });
      } else if (name == "ant" && names[i] == "img3.JPEG") {
        write_png(file, width, height, {}, [&](int, int) {
          return std::array<int, 4>{color[0], color[1], color[2], 0};
        });
      } else {
        write_solid(file, width, height, color);
      }
    }
  }
  write_text(root / "README", "ignored");

  // Sorted: ant, bee, cat; IMG2.jpeg, img0.JPG, img1.jpg, img3.JPEG.
  const std::array<std::size_t, 4> sorted_names{2, 3, 1, 0};
  std::vector<ExpectedFile> expected;
  for (const std::size_t c : {1, 2, 0}) {
    const auto& [name, color] = classes[c];
    for (const std::size_t i : sorted_names) {
      const bool gray = name == "bee" && names[i] == "img1.jpg";
      expected.push_back({root / name / names[i], static_cast<std::int32_t>(expected.size() / 4),
                          sizes[i].first, sizes[i].second, gray ? Color{128, 128, 128} : color});
    }
  }
  return expected;
}

// make_folder's classes with gradients in place of flat colours, which would look the same under
// every crop, at 4 times the size, so that decoding takes long enough for all threads to share it.
ImageFolder make_gradient_folder(const fs::path& root) {
  for (const ExpectedFile& file : make_folder(root)) {
    write_gradient(file.path, 4 * file.width, 4 * file.height);
  }
  return index_image_folder(root);
}

float normalized(int level, std::size_t channel) {
  return (static_cast<float>(level) / 255.0F - kMean[channel]) / kStd[channel];
}

// Every pixel of the C,H,W image `out` (S x S) in columns [x0, x1) is `color`.
::testing::AssertionResult ColumnsHaveColor(std::span<const float> out, int size, int x0, int x1,
                                            const Color& color) {
  const auto plane = static_cast<std::size_t>(size * size);
  for (std::size_t c = 0; c < 3; ++c) {
    const float tolerance = static_cast<float>(kLevelTolerance) / 255.0F / kStd[c];
    for (int y = 0; y < size; ++y) {
      for (int x = x0; x < x1; ++x) {
        const float value = out[c * plane + static_cast<std::size_t>(y * size + x)];
        if (std::abs(value - normalized(color[c], c)) > tolerance) {
          return ::testing::AssertionFailure()
                 << "channel " << c << " at (" << x << ", " << y << ") is " << value
                 << ", expected " << normalized(color[c], c);
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Success iff `f` throws a DataError whose message is one line naming `path`.
template <typename F>
::testing::AssertionResult FailsNaming(F f, const fs::path& path) {
  try {
    f();
  } catch (const DataError& error) {
    const std::string message = error.what();
    if (message.rfind("image-folder: ", 0) != 0 || message.find('\n') != std::string::npos ||
        message.find(path.string()) == std::string::npos) {
      return ::testing::AssertionFailure() << "bad message: " << message;
    }
    return ::testing::AssertionSuccess() << message;
  }
  return ::testing::AssertionFailure() << "no DataError";
}

std::vector<float> load(const fs::path& path, int size, ImageMode mode, std::uint64_t seed) {
  std::vector<float> out(static_cast<std::size_t>(3 * size * size));
  std::mt19937_64 rng(seed);
  load_image_sample(path, {.output_size = size, .mode = mode}, rng, out);
  return out;
}

// ---------------------------------------------------------------- indexing

TEST(ImageFolderIndex, SortsClassesAndFilesAndLabelsByClass) {
  TempDir dir;
  const std::vector<ExpectedFile> expected = make_folder(dir.path());
  const ImageFolder folder = index_image_folder(dir.path());
  EXPECT_EQ(folder.classes, (std::vector<std::string>{"ant", "bee", "cat"}));
  ASSERT_EQ(folder.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(folder.files[i].path, expected[i].path) << i;
    EXPECT_EQ(folder.files[i].label, expected[i].label) << i;
  }
}

TEST(ImageFolderIndex, RejectsMissingRootEmptyRootAndEmptyClass) {
  TempDir dir;
  const fs::path missing = dir.path() / "missing";
  EXPECT_TRUE(FailsNaming([&] { index_image_folder(missing); }, missing));

  write_text(dir.path() / "file.jpg", "x");
  EXPECT_TRUE(
      FailsNaming([&] { index_image_folder(dir.path() / "file.jpg"); }, dir.path() / "file.jpg"));
  EXPECT_TRUE(FailsNaming([&] { index_image_folder(dir.path()); }, dir.path()));

  write_solid(dir.path() / "a.jpg", 8, 8, {1, 2, 3});
  fs::create_directories(dir.path() / "full");
  write_solid(dir.path() / "full" / "x.jpeg", 8, 8, {1, 2, 3});
  fs::create_directories(dir.path() / "hollow");
  write_text(dir.path() / "hollow" / "notes.txt", "no images here");
  EXPECT_TRUE(FailsNaming([&] { index_image_folder(dir.path()); }, dir.path() / "hollow"));
}

// ---------------------------------------------------------------- decoding

TEST(ImageFolderDecode, GivesSizeAndColourOfRgbAndGrayscaleFiles) {
  TempDir dir;
  for (const ExpectedFile& file : make_folder(dir.path())) {
    const Image image = decode_image(file.path);
    ASSERT_EQ(image.width, file.width) << file.path;
    ASSERT_EQ(image.height, file.height) << file.path;
    ASSERT_EQ(image.rgb.size(), static_cast<std::size_t>(file.width * file.height * 3));
    for (std::size_t i = 0; i < image.rgb.size(); ++i) {
      ASSERT_NEAR(image.rgb[i], file.color[i % 3], kLevelTolerance) << file.path << " byte " << i;
    }
  }
}

TEST(ImageFolderDecode, ConvertsAdobeCmykToRgb) {
  TempDir dir;
  const fs::path path = dir.path() / "cmyk.jpg";
  // Stored inverted: 255 - ink. R = C' K' / 255 = 255 * 200 / 255, and so on.
  write_jpeg(path, 24, 16, 4, [](int, int) {
    return std::array<std::uint8_t, 4>{255, 102, 51, 200};
  });
  const Image image = decode_image(path);
  ASSERT_EQ(image.width, 24);
  ASSERT_EQ(image.height, 16);
  const Color expected{200, 80, 40};
  for (std::size_t i = 0; i < image.rgb.size(); ++i) {
    ASSERT_NEAR(image.rgb[i], expected[i % 3], kLevelTolerance) << "byte " << i;
  }
}

// A region's decode gives the whole decode's pixels, to the bit, within the region and a pixel
// around it: at every scale, for 4:2:0 colour, grayscale and CMYK, regions anywhere.
TEST(ImageFolderDecode, ARegionDecodesToTheWholeImagesOwnPixels) {
  TempDir dir;
  const auto noise = [](int x, int y) {
    const auto v = static_cast<std::uint8_t>((x * 7919 + y * 104729) * 2654435761U >> 24);
    return std::array<std::uint8_t, 4>{v, static_cast<std::uint8_t>(x * 3 + y),
                                       static_cast<std::uint8_t>(v / 2 + y), 90};
  };
  const std::vector<std::pair<fs::path, std::array<int, 3>>> files{
      {dir.path() / "colour.jpg", {203, 151, 3}},
      {dir.path() / "grey.jpg", {97, 130, 1}},
      {dir.path() / "cmyk.jpg", {64, 48, 4}}};
  std::mt19937_64 rng(5);
  const auto draw = [&](double below) { return std::uniform_real_distribution(0.0, below)(rng); };
  for (const auto& [path, shape] : files) {
    const auto [width, height, components] = shape;
    write_jpeg(path, width, height, components, noise);
    for (const unsigned scale : {1U, 2U, 4U, 8U}) {
      const Image whole = open_image(path)->decode(scale);
      for (int trial = 0; trial < 24; ++trial) {
        PixelRegion region;
        region.left = draw(width - 1);
        region.top = draw(height - 1);
        region.width = 1 + draw(width - 1 - region.left);
        region.height = 1 + draw(height - 1 - region.top);
        const Image part = open_image(path)->decode(scale, region);
        ASSERT_EQ(part.width, whole.width);
        ASSERT_EQ(part.height, whole.height);
        const double sx = static_cast<double>(whole.width) / width;
        const double sy = static_cast<double>(whole.height) / height;
        const auto span = [](double from, double to, int size) {
          return std::pair{std::clamp(static_cast<int>(std::floor(from)) - 1, 0, size),
                           std::clamp(static_cast<int>(std::ceil(to)) + 1, 0, size)};
        };
        const auto [x0, x1] =
            span(region.left * sx, (region.left + region.width) * sx, whole.width);
        const auto [y0, y1] =
            span(region.top * sy, (region.top + region.height) * sy, whole.height);
        for (int y = y0; y < y1; ++y) {
          const std::size_t at = (static_cast<std::size_t>(y) * whole.width + x0) * 3;
          const std::size_t bytes = static_cast<std::size_t>(x1 - x0) * 3;
          ASSERT_EQ(std::memcmp(part.rgb.data() + at, whole.rgb.data() + at, bytes), 0)
              << path << " at 1/" << scale << ", row " << y << " of columns " << x0 << ".." << x1;
        }
      }
    }
  }
}

// Each of PNG's colour types and depths becomes what PIL's convert("RGB") gives: exactly, PNG
// being lossless.
TEST(ImageFolderDecode, ConvertsEveryPngLayoutAsPilDoes) {
  struct Case {
    const char* name;
    PngLayout layout;
    std::function<Color(const std::array<int, 4>&)> rgb;  // the expected RGB of given samples
  };
  const auto gray = [](int levels) {
    return [levels](const std::array<int, 4>& v) {
      const int g = v[0] * 255 / (levels - 1);
      return Color{g, g, g};
    };
  };
  const auto first_three = [](const std::array<int, 4>& v) { return Color{v[0], v[1], v[2]}; };
  const auto high_bytes = [](const std::array<int, 4>& v) {
    return Color{v[0] >> 8, v[1] >> 8, v[2] >> 8};
  };
  const std::vector<std::array<int, 3>> palette{{255, 0, 0}, {0, 128, 255}, {7, 77, 177}};
  const auto lookup = [&](const std::array<int, 4>& v) {
    return Color{palette[v[0]][0], palette[v[0]][1], palette[v[0]][2]};
  };
  const auto layout = [](PngColour colour, int bit_depth, bool interlaced = false,
                         std::vector<std::array<int, 3>> entries = {}) {
    return PngLayout{colour, bit_depth, interlaced, std::move(entries)};
  };
  const std::vector<Case> cases{
      {"gray8", layout(PngColour::gray, 8), gray(256)},
      {"gray2", layout(PngColour::gray, 2), gray(4)},
      {"gray16", layout(PngColour::gray, 16),
       [](const std::array<int, 4>& v) {
         return Color{v[0] >> 8, v[0] >> 8, v[0] >> 8};
       }},
      {"gray_alpha", layout(PngColour::gray_alpha, 8), gray(256)},
      {"rgb", layout(PngColour::rgb, 8), first_three},
      {"rgb16", layout(PngColour::rgb, 16), high_bytes},
      {"rgb_alpha", layout(PngColour::rgb_alpha, 8), first_three},
      {"rgb_interlaced", layout(PngColour::rgb, 8, true), first_three},
      {"palette4", layout(PngColour::palette, 4, false, palette), lookup},
      {"palette8", layout(PngColour::palette, 8, false, palette), lookup},
  };
  TempDir dir;
  constexpr int kWidth = 13, kHeight = 7;
  for (const Case& c : cases) {
    const int top = c.layout.colour == PngColour::palette ? 3 : 1 << c.layout.bit_depth;
    // Distinct samples in each channel and pixel, alpha included.
    const auto samples = [top](int x, int y) {
      std::array<int, 4> v{};
      for (int k = 0; k < 4; ++k) v[k] = (x * 7919 + y * 104729 + k * 7717 + x * y * 13) % top;
      return v;
    };
    const fs::path path = dir.path() / (std::string(c.name) + ".JPEG");
    write_png(path, kWidth, kHeight, c.layout, samples);
    const Image image = decode_image(path);
    ASSERT_EQ(image.width, kWidth) << c.name;
    ASSERT_EQ(image.height, kHeight) << c.name;
    ASSERT_EQ(image.rgb.size(), std::size_t{3} * kWidth * kHeight) << c.name;
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        const Color expected = c.rgb(samples(x, y));
        for (std::size_t k = 0; k < 3; ++k) {
          ASSERT_EQ(image.rgb[3 * static_cast<std::size_t>(y * kWidth + x) + k], expected[k])
              << c.name << " at (" << x << ", " << y << ") channel " << k;
        }
      }
    }
  }
}

TEST(ImageFolderDecode, RejectsTruncatedAndCorruptPngsNamingThem) {
  TempDir dir;
  // Noise compresses badly, so the image data is most of the file.
  const auto noise = [](int x, int y) {
    const int v = static_cast<int>((x * 7919U + y * 104729U) * 2654435761U >> 24);
    return std::array<int, 4>{v, (v * 3) & 0xFF, 77, 0};
  };
  const fs::path truncated = dir.path() / "truncated.JPEG";
  write_png(truncated, 64, 64, {}, noise);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  EXPECT_TRUE(FailsNaming([&] { decode_image(truncated); }, truncated));

  // A byte of the image data changed: its chunk's CRC no longer matches.
  const fs::path corrupt = dir.path() / "corrupt.png";
  write_png(corrupt, 64, 64, {}, noise);
  {
    std::fstream file(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(fs::file_size(corrupt) / 2);
    file.seekg(middle);
    const int byte = file.get();
    file.seekp(middle);
    file.put(static_cast<char>(byte ^ 0xFF));
  }
  EXPECT_TRUE(FailsNaming([&] { decode_image(corrupt); }, corrupt));
}

TEST(ImageFolderDecode, RejectsTruncatedAndNonJpegFilesNamingThem) {
  TempDir dir;
  const fs::path truncated = dir.path() / "truncated.jpg";
  write_truncated(truncated);
  EXPECT_TRUE(FailsNaming([&] { decode_image(truncated); }, truncated));

  const fs::path text = dir.path() / "text.JPEG";
  write_text(text, "this is not a JPEG file");
  EXPECT_TRUE(FailsNaming([&] { decode_image(text); }, text));
  try {
    decode_image(text);
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("neither a JPEG nor a PNG: starts with 0x74 0x68"),
              std::string::npos)
        << e.what();
  }

  const fs::path empty = dir.path() / "empty.jpg";
  write_text(empty, "");
  EXPECT_TRUE(FailsNaming([&] { decode_image(empty); }, empty));

  const fs::path missing = dir.path() / "missing.jpg";
  EXPECT_TRUE(FailsNaming([&] { decode_image(missing); }, missing));
}

// ---------------------------------------------------------------- transforms

TEST(ImageFolderTransform, ValidationGivesNormalizedColourOfEachFile) {
  TempDir dir;
  constexpr int kSize = 20;
  for (const ExpectedFile& file : make_folder(dir.path())) {
    const std::vector<float> out = load(file.path, kSize, ImageMode::validation, 1);
    EXPECT_TRUE(ColumnsHaveColor(out, kSize, 0, kSize, file.color)) << file.path;
  }
}

// A width x height JPEG, red in its first `red` columns and blue in the rest.
void write_red_left(const fs::path& path, int width, int height, int red) {
  write_jpeg(path, width, height, 3, [red](int x, int) {
    return x < red ? std::array<std::uint8_t, 4>{220, 30, 30, 0}
                   : std::array<std::uint8_t, 4>{30, 30, 220, 0};
  });
}

// 800 x 600 is decoded at 1/8 for S = 16; the crop must still land on the same
// part of the image. Resize to 24 x 18, crop columns 4..19: the red/blue edge at
// x = 400 of 800 falls on output column 8.
TEST(ImageFolderTransform, ValidationCropsTheCentreOfALargeImage) {
  TempDir dir;
  const fs::path path = dir.path() / "halves.jpg";
  write_red_left(path, 800, 600, 400);
  constexpr int kSize = 16;
  const std::vector<float> out = load(path, kSize, ImageMode::validation, 1);
  EXPECT_TRUE(ColumnsHaveColor(out, kSize, 0, 7, {220, 30, 30}));
  EXPECT_TRUE(ColumnsHaveColor(out, kSize, 9, kSize, {30, 30, 220}));
}

// One row, 0 0 100 100 0 0 100 100, halved: each output pixel sits halfway between two source
// pixels (t = 1/2), where OpenCV's cubic weights (a = -0.75) are -3/32, 19/32, 19/32, -3/32 with
// the edge pixel repeated: -9.4, 118.75, -18.75, 109.4, rounded and clamped. Bilinear would give
// 0, 100, 0, 100 and a low-passed resize 25, 75, 25, 75. The single row is repeated, unchanged.
TEST(ImageSquash, IsOpenCvsBicubicComputedByHand) {
  Image row{8, 1, {}};
  for (const int level : {0, 0, 100, 100, 0, 0, 100, 100}) {
    row.rgb.insert(row.rgb.end(), 3, static_cast<std::uint8_t>(level));
  }
  const Image square = squash(row, 4);
  ASSERT_EQ(square.width, 4);
  ASSERT_EQ(square.height, 4);
  for (std::size_t y = 0; y < 4; ++y) {
    for (std::size_t x = 0; x < 4; ++x) {
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(square.rgb[(y * 4 + x) * 3 + c], (std::array<int, 4>{0, 119, 0, 109}[x]))
            << "(" << x << ", " << y << ") channel " << c;
      }
    }
  }
}

// 80 x 40, red in its left quarter. Squashed to 16 x 16, the quarter is columns 0-3, and with
// --val-crop-fraction 1 the validation image is the square itself. Kept at its aspect ratio and
// resized to 32 x 16, the centre 16 columns begin where the red ends.
TEST(ImageFolderTransform, ASquashedImageKeepsAllOfItsWidth) {
  TempDir dir;
  const fs::path path = dir.path() / "quarter.jpg";
  write_red_left(path, 80, 40, 20);
  constexpr int kSize = 16;
  std::mt19937_64 rng(1);
  std::vector<float> squashed(3 * kSize * kSize), kept(3 * kSize * kSize);
  load_image_sample(path, {kSize, ImageMode::validation, kSize, 1.0}, rng, squashed);
  load_image_sample(path, {kSize, ImageMode::validation, 0, 1.0}, rng, kept);
  EXPECT_TRUE(ColumnsHaveColor(squashed, kSize, 0, 3, {220, 30, 30}));
  EXPECT_TRUE(ColumnsHaveColor(squashed, kSize, 5, kSize, {30, 30, 220}));
  EXPECT_TRUE(ColumnsHaveColor(kept, kSize, 1, kSize, {30, 30, 220}));
}

// 64 x 64, red in its left 4 columns. Fraction 1: resized to 16, the red is column 0. Fraction
// 1/2: resized to 32, whose centre 16 columns (8-23) hold no red.
TEST(ImageFolderTransform, ValidationCropFractionOneKeepsTheWholeShorterSide) {
  TempDir dir;
  const fs::path path = dir.path() / "edge.jpg";
  write_red_left(path, 64, 64, 4);
  constexpr int kSize = 16;
  std::mt19937_64 rng(1);
  std::vector<float> whole(3 * kSize * kSize), half(3 * kSize * kSize);
  load_image_sample(path, {kSize, ImageMode::validation, 0, 1.0}, rng, whole);
  load_image_sample(path, {kSize, ImageMode::validation, 0, 0.5}, rng, half);
  EXPECT_TRUE(ColumnsHaveColor(whole, kSize, 0, 1, {220, 30, 30}));
  EXPECT_TRUE(ColumnsHaveColor(whole, kSize, 2, kSize, {30, 30, 220}));
  EXPECT_TRUE(ColumnsHaveColor(half, kSize, 0, kSize, {30, 30, 220}));
  std::vector<float> out(3 * kSize * kSize);
  EXPECT_THROW(load_image_sample(path, {kSize, ImageMode::validation, 0, 1.5}, rng, out),
               std::invalid_argument);
}

// Training crops come from the square: still the colour of a flat image, and the same per seed.
TEST(ImageFolderTransform, TrainCropsASquashedImage) {
  TempDir dir;
  write_solid(dir.path() / "flat.jpg", 60, 20, {90, 150, 210});
  constexpr int kSize = 12;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    std::mt19937_64 first(seed), second(seed);
    std::vector<float> a(3 * kSize * kSize), b(3 * kSize * kSize);
    load_image_sample(dir.path() / "flat.jpg", {kSize, ImageMode::train, 24}, first, a);
    load_image_sample(dir.path() / "flat.jpg", {kSize, ImageMode::train, 24}, second, b);
    EXPECT_TRUE(ColumnsHaveColor(a, kSize, 0, kSize, {90, 150, 210})) << "seed " << seed;
    EXPECT_EQ(a, b) << "seed " << seed;
  }
}

TEST(ImageFolderTransform, ValidationOutputOfWrongSizeIsRejected) {
  TempDir dir;
  write_solid(dir.path() / "a.jpg", 8, 8, {1, 2, 3});
  std::vector<float> out(10);
  std::mt19937_64 rng(1);
  EXPECT_THROW(load_image_sample(dir.path() / "a.jpg", {4, ImageMode::validation}, rng, out),
               std::invalid_argument);
}

// Bilinear resampling written out per output pixel: PyTorch's align_corners=false positions,
// clamped to the crop (train: cut out first) or the image (validation), mixed across and then
// down, scaled and normalised. resample() is separable; its result must be this one's, bit for bit.
std::vector<float> resample_per_pixel(const Image& image, const CropBox& box, int size) {
  struct Tap {
    int low, high;
    float weight;
  };
  const auto taps = [&](double start, double extent, int source) {
    const double first = box.cut_out ? std::max(0.0, std::ceil(start - 0.5)) : 0.0;
    const double last =
        box.cut_out ? std::max(first, std::min(source - 1.0, std::floor(start + extent - 0.5)))
                    : source - 1.0;
    std::vector<Tap> t;
    for (int o = 0; o < size; ++o) {
      const double position = std::clamp(start + (o + 0.5) * (extent / size) - 0.5, first, last);
      const int low = static_cast<int>(position);
      t.push_back(
          {low, std::min(low + 1, static_cast<int>(last)), static_cast<float>(position - low)});
    }
    return t;
  };
  const std::vector<Tap> rows = taps(box.top, box.height, image.height);
  std::vector<Tap> cols = taps(box.left, box.width, image.width);
  if (box.flip) std::reverse(cols.begin(), cols.end());
  const auto at = [&](int y, int x, int c) -> float {
    return image.rgb[(static_cast<std::size_t>(y) * image.width + x) * 3 + c];
  };
  const auto mix = [](float a, float b, float t) { return a + t * (b - a); };
  std::vector<float> out(3 * static_cast<std::size_t>(size) * size);
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      for (int c = 0; c < 3; ++c) {
        const Tap& r = rows[y];
        const Tap& k = cols[x];
        const float top = mix(at(r.low, k.low, c), at(r.low, k.high, c), k.weight);
        const float bottom = mix(at(r.high, k.low, c), at(r.high, k.high, c), k.weight);
        out[(static_cast<std::size_t>(c) * size + y) * size + x] =
            mix(top, bottom, r.weight) * (1.0F / (255.0F * kStd[c])) + (-kMean[c] / kStd[c]);
      }
    }
  }
  return out;
}

TEST(ImageFolderTransform, ResampleIsThePerPixelBilinearToTheBit) {
  std::mt19937_64 noise(3);
  for (const auto& [width, height] : {std::pair{500, 375}, std::pair{37, 29}, std::pair{8, 300}}) {
    Image image{width, height, std::vector<std::uint8_t>(3 * std::size_t(width) * height)};
    for (std::uint8_t& v : image.rgb) v = static_cast<std::uint8_t>(noise());
    for (const int size : {224, 13}) {
      std::vector<CropBox> boxes = {center_crop(width, height, size, 0.875),
                                    center_crop(width, height, size, 1.0)};
      for (std::uint64_t seed = 0; seed < 6; ++seed) {
        std::mt19937_64 rng(seed);
        boxes.push_back(random_resized_crop(width, height, rng));
        boxes.push_back(random_resized_crop(width, height, rng, ResizedCrop::torchvision_0_2));
      }
      for (std::size_t b = 0; b < boxes.size(); ++b) {
        const std::vector<float> expected = resample_per_pixel(image, boxes[b], size);
        std::vector<float> got(expected.size());
        resample(image, boxes[b], size, got);
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
            << width << "x" << height << " to " << size << ", box " << b
            << (boxes[b].flip ? " flipped" : "");
      }
    }
  }
}

TEST(ImageFolderTransform, TrainKeepsTheColourOfAFlatImage) {
  TempDir dir;
  write_solid(dir.path() / "flat.jpg", 50, 40, {90, 150, 210});
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const std::vector<float> out = load(dir.path() / "flat.jpg", 12, ImageMode::train, seed);
    EXPECT_TRUE(ColumnsHaveColor(out, 12, 0, 12, {90, 150, 210})) << "seed " << seed;
  }
}

TEST(ImageFolderTransform, TrainIsDeterministicPerSeed) {
  TempDir dir;
  const fs::path path = dir.path() / "gradient.jpg";
  write_gradient(path, 64, 48);
  EXPECT_EQ(load(path, 16, ImageMode::train, 7), load(path, 16, ImageMode::train, 7));
  EXPECT_NE(load(path, 16, ImageMode::train, 7), load(path, 16, ImageMode::train, 8));
}

// Red rises left to right in the file, so it falls in the output iff flipped.
TEST(ImageFolderTransform, TrainFlipsAboutHalfTheTime) {
  TempDir dir;
  const fs::path path = dir.path() / "gradient.jpg";
  write_gradient(path, 64, 48);
  constexpr int kSize = 16;
  constexpr int kSeeds = 40;
  int flipped = 0;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    const std::vector<float> out = load(path, kSize, ImageMode::train, seed);
    float left = 0, right = 0;  // red, first and last columns
    for (int y = 0; y < kSize; ++y) {
      left += out[static_cast<std::size_t>(y * kSize)];
      right += out[static_cast<std::size_t>(y * kSize + kSize - 1)];
    }
    ASSERT_NE(left, right) << "seed " << seed;
    flipped += left > right ? 1 : 0;
  }
  EXPECT_GE(flipped, kSeeds / 4);
  EXPECT_LE(flipped, kSeeds * 3 / 4);
}

// torchvision 0.2.1's RandomResizedCrop.get_params, its first attempt replayed by hand from the
// same engine: area fraction U(0.08, 1), aspect ratio U(3/4, 4/3), w and h rounded half to even
// (Python's round), swapped when the next draw is below 1/2.
TEST(ImageFolderTransform, TorchvisionZeroTwoCropIsItsGetParams) {
  constexpr int kWidth = 500, kHeight = 375;
  const auto unit = [](std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  int replayed = 0, swapped = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed), replay(seed);
    const CropBox box = random_resized_crop(kWidth, kHeight, rng, ResizedCrop::torchvision_0_2);
    const double target_area = kWidth * kHeight * (0.08 + 0.92 * unit(replay));
    const double ratio = 0.75 + (4.0 / 3.0 - 0.75) * unit(replay);
    int w = static_cast<int>(std::nearbyint(std::sqrt(target_area * ratio)));
    int h = static_cast<int>(std::nearbyint(std::sqrt(target_area / ratio)));
    const bool swap = unit(replay) < 0.5;
    if (swap) std::swap(w, h);
    if (w > kWidth || h > kHeight) continue;  // a later attempt's crop
    ++replayed;
    swapped += swap && w != h ? 1 : 0;
    ASSERT_EQ(box.width, w) << "seed " << seed;
    ASSERT_EQ(box.height, h) << "seed " << seed;
    EXPECT_LE(box.left + box.width, kWidth);
    EXPECT_LE(box.top + box.height, kHeight);
  }
  EXPECT_GT(replayed, 150);
  EXPECT_GT(swapped, 40);
  // Where no draw fits, the central square of the shorter side; since 0.3, the largest central
  // crop whose ratio is within [3/4, 4/3].
  std::mt19937_64 rng(1);
  const CropBox old = random_resized_crop(1000, 10, rng, ResizedCrop::torchvision_0_2);
  EXPECT_EQ(std::vector<double>({old.left, old.top, old.width, old.height}),
            std::vector<double>({495, 0, 10, 10}));
  const CropBox current = random_resized_crop(1000, 10, rng, ResizedCrop::torchvision);
  EXPECT_EQ(std::vector<double>({current.left, current.top, current.width, current.height}),
            std::vector<double>({493, 0, 13, 10}));
}

// ---------------------------------------------------------------- loader

std::vector<ImageBatch> drain(ImageFolderLoader& loader) {
  std::vector<ImageBatch> batches;
  ImageBatch batch;
  while (loader.next(batch)) batches.push_back(batch);
  return batches;
}

std::vector<ImageBatch> run_epoch(const ImageFolder& folder, const ImageLoaderOptions& options,
                                  const std::vector<std::uint32_t>& order, std::size_t batch_size,
                                  std::uint64_t seed) {
  ImageFolderLoader loader(folder, options);
  loader.start_epoch(order, batch_size, seed);
  return drain(loader);
}

const std::vector<std::uint32_t> kOrder{5, 11, 0, 3, 7, 1, 9, 2, 10, 4, 8, 6, 5};

// Batches of 5, 5 and 3 whose labels follow the order.
void expect_batches_follow_order(const std::vector<ImageBatch>& batches, const ImageFolder& folder,
                                 int size) {
  const std::size_t numel = 3 * static_cast<std::size_t>(size * size);
  ASSERT_EQ(batches.size(), 3U);
  std::size_t position = 0;
  for (const ImageBatch& batch : batches) {
    ASSERT_EQ(batch.size(), position < 10 ? 5U : 3U);
    ASSERT_EQ(batch.features.size(), batch.size() * numel);
    for (const std::int32_t label : batch.labels) {
      EXPECT_EQ(label, folder.files[kOrder[position++]].label) << "position " << position - 1;
    }
  }
}

TEST(ImageFolderLoader, ValidationBatchesHoldEachSampleOfTheOrderInOrder) {
  TempDir dir;
  make_folder(dir.path());
  const ImageFolder folder = index_image_folder(dir.path());
  constexpr int kSize = 12;
  const std::size_t numel = 3 * kSize * kSize;
  const std::vector<std::pair<std::size_t, std::size_t>> configs{{1, 1}, {3, 2}, {3, 1}};
  for (const auto& [threads, prefetch] : configs) {
    SCOPED_TRACE("threads " + std::to_string(threads) + ", prefetch " + std::to_string(prefetch));
    const std::vector<ImageBatch> batches =
        run_epoch(folder, {kSize, threads, prefetch, ImageMode::validation}, kOrder, 5, 3);
    expect_batches_follow_order(batches, folder, kSize);
    std::size_t position = 0;
    for (const ImageBatch& batch : batches) {
      for (std::size_t row = 0; row < batch.size(); ++row) {
        const std::vector<float> sample(batch.features.begin() + row * numel,
                                        batch.features.begin() + (row + 1) * numel);
        EXPECT_EQ(sample,
                  load(folder.files[kOrder[position]].path, kSize, ImageMode::validation, 0))
            << "position " << position;
        ++position;
      }
    }
  }
}

TEST(ImageFolderLoader, TrainBatchesDependOnSeedButNotOnThreads) {
  TempDir dir;
  const ImageFolder folder = make_gradient_folder(dir.path());
  constexpr int kSize = 12;
  const std::vector<ImageBatch> one =
      run_epoch(folder, {kSize, 1, 1, ImageMode::train}, kOrder, 5, 3);
  const std::vector<ImageBatch> three =
      run_epoch(folder, {kSize, 3, 2, ImageMode::train}, kOrder, 5, 3);
  const std::vector<ImageBatch> reseeded =
      run_epoch(folder, {kSize, 3, 2, ImageMode::train}, kOrder, 5, 4);
  expect_batches_follow_order(one, folder, kSize);
  expect_batches_follow_order(three, folder, kSize);
  ASSERT_EQ(one.size(), three.size());
  for (std::size_t b = 0; b < one.size(); ++b) EXPECT_EQ(one[b].features, three[b].features) << b;
  for (std::size_t b = 0; b < one.size(); ++b)
    EXPECT_NE(one[b].features, reseeded[b].features) << b;
}

TEST(ImageFolderLoader, RunsConsecutiveEpochsAndRestartsMidEpoch) {
  TempDir dir;
  make_folder(dir.path());
  const ImageFolder folder = index_image_folder(dir.path());
  ImageFolderLoader loader(folder, {8, 3, 2, ImageMode::validation});
  loader.start_epoch(kOrder, 5, 1);
  const std::vector<ImageBatch> first = drain(loader);
  ImageBatch batch;
  EXPECT_FALSE(loader.next(batch));

  loader.start_epoch(kOrder, 5, 1);
  ASSERT_TRUE(loader.next(batch));
  loader.start_epoch(kOrder, 5, 1);
  const std::vector<ImageBatch> restarted = drain(loader);
  ASSERT_EQ(first.size(), restarted.size());
  for (std::size_t b = 0; b < first.size(); ++b) {
    EXPECT_EQ(first[b].features, restarted[b].features) << b;
    EXPECT_EQ(first[b].labels, restarted[b].labels) << b;
  }
}

TEST(ImageFolderLoader, RethrowsABadFileWhenItsBatchIsDue) {
  TempDir dir;
  make_folder(dir.path());
  const fs::path bad = dir.path() / "bee" / "img0.JPG";
  write_truncated(bad);
  const ImageFolder folder = index_image_folder(dir.path());
  ASSERT_EQ(folder.files[5].path, bad);
  for (const std::size_t threads : {1, 3}) {
    ImageFolderLoader loader(folder, {8, threads, 2, ImageMode::train});
    loader.start_epoch(std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}, 2, 1);
    ImageBatch batch;
    for (int b = 0; b < 2; ++b) ASSERT_TRUE(loader.next(batch)) << b;
    EXPECT_TRUE(FailsNaming([&] { loader.next(batch); }, bad));
    EXPECT_FALSE(loader.next(batch));

    // The loader stays usable.
    loader.start_epoch(std::vector<std::uint32_t>{0, 6, 7}, 2, 1);
    EXPECT_EQ(drain(loader).size(), 2U);
  }
}

TEST(ImageFolderLoader, StopsMidEpochWithoutHanging) {
  TempDir dir;
  make_folder(dir.path());
  const ImageFolder folder = index_image_folder(dir.path());
  std::vector<std::uint32_t> order(400);
  std::iota(order.begin(), order.end(), 0U);
  for (std::uint32_t& index : order) index %= 12;
  {
    ImageFolderLoader loader(folder, {8, 3, 4, ImageMode::train});
    loader.start_epoch(order, 4, 1);
    ImageBatch batch;
    ASSERT_TRUE(loader.next(batch));
  }
  {
    ImageFolderLoader loader(folder, {8, 3, 4, ImageMode::train});
    loader.start_epoch(order, 4, 1);
  }
  ImageFolderLoader idle(folder, {8, 3, 4, ImageMode::train});
}

TEST(ImageFolderLoader, RejectsBadArguments) {
  TempDir dir;
  make_folder(dir.path());
  const ImageFolder folder = index_image_folder(dir.path());
  EXPECT_THROW(ImageFolderLoader(folder, {8, 0, 2, ImageMode::train}), std::invalid_argument);
  EXPECT_THROW(ImageFolderLoader(folder, {8, 1, 0, ImageMode::train}), std::invalid_argument);
  EXPECT_THROW(ImageFolderLoader(folder, {0, 1, 1, ImageMode::train}), std::invalid_argument);
  ImageFolderLoader loader(folder, {8, 1, 1, ImageMode::train});
  EXPECT_THROW(loader.start_epoch(std::vector<std::uint32_t>{0, 12}, 2, 1), std::out_of_range);
  EXPECT_THROW(loader.start_epoch(std::vector<std::uint32_t>{0}, 0, 1), std::invalid_argument);
  EXPECT_EQ(loader.sample_shape(), (SampleShape{3, 8, 8}));
  EXPECT_EQ(loader.folder().size(), 12U);
}

// ---------------------------------------------------------------- data set

// root/train and root/val with the classes of make_folder.
void make_image_net(const fs::path& root) {
  make_folder(root / "train");
  make_folder(root / "val");
}

TEST(ImageFolderDataset, IndexesTrainAndValUnderTheRoot) {
  TempDir dir;
  make_image_net(dir.path());
  DatasetOptions options;
  options.kind = "image-folder";
  options.path = dir.path().string();
  options.image_size = 20;
  const Dataset ds = load_dataset(options);
  EXPECT_EQ(ds.name, "image-folder");
  EXPECT_EQ(ds.shape, (SampleShape{3, 20, 20}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train_size(), 12U);
  EXPECT_EQ(ds.validation_size(), 12U);
  EXPECT_EQ(ds.train.size(), 0U);  // nothing is decoded up front
  EXPECT_EQ(ds.train_images->files[0].path, dir.path() / "train" / "ant" / "IMG2.jpeg");
  EXPECT_EQ(ds.validation_images->files[0].path, dir.path() / "val" / "ant" / "IMG2.jpeg");
}

TEST(ImageFolderDataset, RejectsMissingSplitsAndDifferentClasses) {
  TempDir dir;
  DatasetOptions options;
  options.kind = "image-folder";
  options.path = dir.path().string();
  make_folder(dir.path() / "train");
  EXPECT_TRUE(FailsNaming([&] { load_dataset(options); }, dir.path() / "val"));
  make_folder(dir.path() / "val");
  fs::rename(dir.path() / "val" / "bee", dir.path() / "val" / "bees");
  EXPECT_TRUE(FailsNaming([&] { load_dataset(options); }, dir.path() / "val"));
  options.image_size = 0;
  EXPECT_THROW(load_dataset(options), DataError);
}

// ---------------------------------------------------------------- batch reader

std::vector<float> read_batch(BatchReader& reader, std::size_t first, std::size_t count, int size,
                              std::vector<std::int64_t>* labels = nullptr) {
  std::vector<float> features(count * 3 * static_cast<std::size_t>(size * size));
  std::vector<std::int64_t> batch_labels(count);
  reader.read(first, count, features, batch_labels);
  if (labels != nullptr) *labels = batch_labels;
  return features;
}

TEST(BatchReader, ReadsAFolderInTheEpochsOrderWhateverOrderBatchesAreAskedFor) {
  TempDir dir;
  const ImageFolder folder = make_gradient_folder(dir.path());
  constexpr int kSize = 10;
  const ImageLoaderOptions options{kSize, 2, 2, ImageMode::train};
  BatchReader in_order(folder, options, 7);
  in_order.begin_epoch(kOrder, 5, 3);
  std::vector<std::vector<float>> expected;
  for (const std::size_t first : {0, 5, 10}) {
    std::vector<std::int64_t> labels;
    expected.push_back(read_batch(in_order, first, first == 10 ? 3 : 5, kSize, &labels));
    for (std::size_t i = 0; i < labels.size(); ++i) {
      EXPECT_EQ(labels[i], folder.files[kOrder[first + i]].label) << first + i;
    }
  }
  // A resumed epoch starts mid-way; a worker going round its shard again goes back.
  BatchReader jumping(folder, options, 7);
  jumping.begin_epoch(kOrder, 5, 3);
  EXPECT_EQ(read_batch(jumping, 5, 5, kSize), expected[1]);
  EXPECT_EQ(read_batch(jumping, 10, 3, kSize), expected[2]);
  EXPECT_EQ(read_batch(jumping, 0, 5, kSize), expected[0]);
  EXPECT_EQ(read_batch(jumping, 5, 5, kSize), expected[1]);
  // Another epoch, or another rank's seed, crops differently.
  jumping.begin_epoch(kOrder, 5, 4);
  EXPECT_NE(read_batch(jumping, 0, 5, kSize), expected[0]);
  BatchReader other_seed(folder, options, 8);
  other_seed.begin_epoch(kOrder, 5, 3);
  EXPECT_NE(read_batch(other_seed, 0, 5, kSize), expected[0]);
  EXPECT_THROW(read_batch(jumping, 1, 4, kSize), std::invalid_argument);
  EXPECT_THROW(read_batch(jumping, 10, 5, kSize), std::invalid_argument);
}

TEST(BatchReader, GathersFromMemoryWithItsAugmentationState) {
  const SampleShape shape{1, 2, 2};
  Split split;
  split.features = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  split.labels = {4, 5, 6};
  BatchReader reader(split, shape, {}, 42);
  const std::vector<std::uint32_t> order{2, 0, 1};
  reader.begin_epoch(order, 2, 0);
  std::vector<float> features(8);
  std::vector<std::int64_t> labels(2);
  reader.read(0, 2, features, labels);
  EXPECT_EQ(features, (std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3}));
  EXPECT_EQ(labels, (std::vector<std::int64_t>{6, 4}));
  features.resize(4);
  labels.resize(1);
  reader.read(2, 1, features, labels);
  EXPECT_EQ(labels, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(reader.rng_state(), 42U);  // nothing drawn without augmentation

  BatchReader augmented(split, shape, {.horizontal_flip = true}, 42);
  augmented.begin_epoch(order, 2, 0);
  features.resize(8);
  labels.resize(2);
  augmented.read(0, 2, features, labels);
  EXPECT_NE(augmented.rng_state(), 42U);
}

}  // namespace
}  // namespace commsgd::data
