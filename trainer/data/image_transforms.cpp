#include "trainer/data/image_transforms.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace commsgd::data {

namespace {

// std:: distributions differ between standard libraries; the engine's output
// does not, so these draw straight from it.
double draw_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

int draw_int(std::mt19937_64& rng, int low, int high) {  // uniform in [low, high]
  const auto bound = static_cast<std::uint64_t>(high - low) + 1;
  const std::uint64_t threshold = (0 - bound) % bound;  // rejection removes modulo bias
  for (;;) {
    const std::uint64_t r = rng();
    if (r >= threshold) return low + static_cast<int>(r % bound);
  }
}

// Python's round(), which torchvision uses: halves go to the even neighbour,
// as does nearbyint in the default rounding mode.
int round_half_even(double x) {
  return static_cast<int>(std::nearbyint(x));
}

}  // namespace

CropBox random_resized_crop(int width, int height, std::mt19937_64& rng, ResizedCrop version) {
  constexpr double kMinScale = 0.08, kMinRatio = 3.0 / 4.0, kMaxRatio = 4.0 / 3.0;
  const bool v0_2 = version == ResizedCrop::torchvision_0_2;
  const double area = static_cast<double>(width) * height;
  CropBox box;
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target_area = area * (kMinScale + (1.0 - kMinScale) * draw_unit(rng));
    const double ratio =
        v0_2 ? kMinRatio + (kMaxRatio - kMinRatio) * draw_unit(rng)
             : std::exp(std::log(kMinRatio) +
                        (std::log(kMaxRatio) - std::log(kMinRatio)) * draw_unit(rng));
    int w = round_half_even(std::sqrt(target_area * ratio));
    int h = round_half_even(std::sqrt(target_area / ratio));
    if (v0_2 && draw_unit(rng) < 0.5) std::swap(w, h);
    if (w <= 0 || w > width || h <= 0 || h > height) continue;
    box.top = draw_int(rng, 0, height - h);
    box.left = draw_int(rng, 0, width - w);
    box.width = w;
    box.height = h;
    found = true;
  }
  if (!found && v0_2) {  // the central square of the shorter side
    const int side = std::min(width, height);
    box = {static_cast<double>((width - side) / 2), static_cast<double>((height - side) / 2),
           static_cast<double>(side), static_cast<double>(side)};
  } else if (!found) {  // the largest central crop whose ratio is within bounds
    const double image_ratio = static_cast<double>(width) / height;
    int w = width, h = height;
    if (image_ratio < kMinRatio) h = round_half_even(w / kMinRatio);
    if (image_ratio > kMaxRatio) w = round_half_even(h * kMaxRatio);
    box = {static_cast<double>((width - w) / 2), static_cast<double>((height - h) / 2),
           static_cast<double>(w), static_cast<double>(h)};
  }
  box.cut_out = true;
  box.flip = draw_unit(rng) < 0.5;
  return box;
}

CropBox center_crop(int width, int height, int output_size, double fraction) {
  const int short_side = static_cast<int>(std::lround(output_size / fraction));
  const bool wide = width > height;
  const int long_side = static_cast<int>(static_cast<long long>(short_side) *
                                         (wide ? width : height) / (wide ? height : width));
  const int resized_width = wide ? long_side : short_side;
  const int resized_height = wide ? short_side : long_side;
  const double sx = static_cast<double>(width) / resized_width;
  const double sy = static_cast<double>(height) / resized_height;
  const int left = round_half_even((resized_width - output_size) / 2.0);
  const int top = round_half_even((resized_height - output_size) / 2.0);
  return {left * sx, top * sy, output_size * sx, output_size * sy};
}

namespace {

constexpr std::array<float, 3> kMean{0.485F, 0.456F, 0.406F};
constexpr std::array<float, 3> kStd{0.229F, 0.224F, 0.225F};

// Source position and weights for one output row or column: bilinear with
// half-pixel centres (PyTorch's align_corners=false). No antialiasing:
// choose_scale_denom() in image_folder.cpp leaves at most a 2x downscale at
// ImageNet sizes, where bilinear aliases little.
struct Tap {
  int low = 0, high = 0;
  float high_weight = 0;
};

std::vector<Tap> bilinear_taps(double start, double extent, int source_size, int output_size,
                               bool cut_out) {
  const double first = cut_out ? std::max(0.0, std::ceil(start - 0.5)) : 0.0;
  const double last =
      cut_out ? std::max(first, std::min(source_size - 1.0, std::floor(start + extent - 0.5)))
              : source_size - 1.0;
  const double step = extent / output_size;
  std::vector<Tap> taps(static_cast<std::size_t>(output_size));
  for (int o = 0; o < output_size; ++o) {
    const double position = std::clamp(start + (o + 0.5) * step - 0.5, first, last);
    const int low = static_cast<int>(position);
    taps[static_cast<std::size_t>(o)] = {low, std::min(low + 1, static_cast<int>(last)),
                                         static_cast<float>(position - low)};
  }
  return taps;
}

float mix(float a, float b, float t) {
  return a + t * (b - a);
}

}  // namespace

// Separable: each source row the output reads is first mixed across columns into a float row,
// one plane per channel, kept while the next output row reads it again; each output row then
// mixes two of those rows, a loop over contiguous floats the compiler vectorises. The sums are
// the per-pixel formula's own (mix across, then down), so the result is the same to the bit.
void resample(const Image& image, const CropBox& box, int output_size, std::span<float> out) {
  const std::vector<Tap> rows =
      bilinear_taps(box.top, box.height, image.height, output_size, box.cut_out);
  std::vector<Tap> cols = bilinear_taps(box.left, box.width, image.width, output_size, box.cut_out);
  if (box.flip) std::reverse(cols.begin(), cols.end());
  const auto size = static_cast<std::size_t>(output_size);
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * 3;
  std::array<float, 3> scale{}, offset{};  // (v / 255 - mean) / std = v * scale + offset
  for (std::size_t c = 0; c < 3; ++c) {
    scale[c] = 1.0F / (255.0F * kStd[c]);
    offset[c] = -kMean[c] / kStd[c];
  }
  // Two source rows mixed across: planes c * size + x. A row is computed into the slot that
  // does not hold `keep`, the other row the current output row needs.
  std::array<std::vector<float>, 2> mixed{std::vector<float>(3 * size),
                                          std::vector<float>(3 * size)};
  std::array<int, 2> mixed_row{-1, -1};
  const auto across = [&](int row, int keep) -> const float* {
    for (std::size_t slot = 0; slot < 2; ++slot) {
      if (mixed_row[slot] == row) return mixed[slot].data();
    }
    const std::size_t slot = mixed_row[0] == keep ? 1 : 0;
    const std::uint8_t* source = image.rgb.data() + static_cast<std::size_t>(row) * row_bytes;
    float* into = mixed[slot].data();
    for (std::size_t x = 0; x < size; ++x) {
      const std::size_t left = static_cast<std::size_t>(cols[x].low) * 3;
      const std::size_t right = static_cast<std::size_t>(cols[x].high) * 3;
      for (std::size_t c = 0; c < 3; ++c) {
        into[c * size + x] = mix(source[left + c], source[right + c], cols[x].high_weight);
      }
    }
    mixed_row[slot] = row;
    return into;
  };
  for (std::size_t y = 0; y < size; ++y) {
    const float* top = across(rows[y].low, rows[y].high);
    const float* bottom = across(rows[y].high, rows[y].low);
    const float weight = rows[y].high_weight;
    for (std::size_t c = 0; c < 3; ++c) {
      float* const plane_row = out.data() + (c * size + y) * size;
      const float* const upper = top + c * size;
      const float* const lower = bottom + c * size;
      for (std::size_t x = 0; x < size; ++x) {
        plane_row[x] = mix(upper[x], lower[x], weight) * scale[c] + offset[c];
      }
    }
  }
}

namespace {

// OpenCV's cubic convolution weights (a = -0.75) of the four pixels around a
// position t in [0, 1) past the second of them.
std::array<float, 4> cubic_weights(float t) {
  constexpr float a = -0.75F;
  const float w0 = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  const float w1 = ((a + 2) * t - (a + 3)) * t * t + 1;
  const float w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  return {w0, w1, w2, 1 - w0 - w1 - w2};
}

// For each of `output` positions: the four source indices (clamped to the
// edge) and their weights.
struct CubicTaps {
  std::vector<std::array<std::size_t, 4>> index;
  std::vector<std::array<float, 4>> weight;
};

CubicTaps cubic_taps(int source, int output) {
  CubicTaps taps;
  const double scale = static_cast<double>(source) / output;
  for (int o = 0; o < output; ++o) {
    const double position = (o + 0.5) * scale - 0.5;
    const int first = static_cast<int>(std::floor(position));
    std::array<std::size_t, 4> index{};
    for (int k = 0; k < 4; ++k)
      index[static_cast<std::size_t>(k)] =
          static_cast<std::size_t>(std::clamp(first - 1 + k, 0, source - 1));
    taps.index.push_back(index);
    taps.weight.push_back(cubic_weights(static_cast<float>(position - first)));
  }
  return taps;
}

}  // namespace

Image squash(const Image& image, int size) {
  const CubicTaps cols = cubic_taps(image.width, size), rows = cubic_taps(image.height, size);
  const auto n = static_cast<std::size_t>(size);
  const auto width = static_cast<std::size_t>(image.width);
  // Columns first, into floats; then rows, rounded and clamped to 8 bits.
  std::vector<float> narrow(static_cast<std::size_t>(image.height) * n * 3);
  for (std::size_t y = 0; y < static_cast<std::size_t>(image.height); ++y) {
    const std::uint8_t* row = image.rgb.data() + y * width * 3;
    for (std::size_t x = 0; x < n; ++x) {
      for (std::size_t c = 0; c < 3; ++c) {
        float sum = 0;
        for (std::size_t k = 0; k < 4; ++k)
          sum += cols.weight[x][k] * row[cols.index[x][k] * 3 + c];
        narrow[(y * n + x) * 3 + c] = sum;
      }
    }
  }
  Image out{size, size, std::vector<std::uint8_t>(n * n * 3)};
  for (std::size_t y = 0; y < n; ++y) {
    for (std::size_t x = 0; x < n * 3; ++x) {
      float sum = 0;
      for (std::size_t k = 0; k < 4; ++k)
        sum += rows.weight[y][k] * narrow[rows.index[y][k] * n * 3 + x];
      out.rgb[y * n * 3 + x] = static_cast<std::uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
    }
  }
  return out;
}

}  // namespace commsgd::data
