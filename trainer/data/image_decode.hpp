// The image files of an image folder read by their content, whatever their extension says:
// JPEG (jpeg_decode.hpp) or PNG (png_decode.hpp), into 8-bit RGB. ImageNet's training set holds a
// PNG named .JPEG, which PIL and OpenCV, the originals' readers, open without a word.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

namespace commsgd::data {

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // height * width * 3, row-major, interleaved R,G,B
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using OpenFile = std::unique_ptr<std::FILE, FileCloser>;

// The part of an image a caller will read, in full-size pixels: a crop box.
struct PixelRegion {
  double left = 0, top = 0, width = 0, height = 0;
};

// An image file opened and its header read, so that its size is known before it is decoded and
// the scale to decode it at can depend on that size.
class ImageReader {
 public:
  virtual ~ImageReader() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  // The image as RGB at about 1/scale_denom of its size (1, 2, 4 or 8): a JPEG at exactly that
  // scale (libjpeg's DCT scaling, rounded up), a PNG at full size whatever is asked (it has no
  // cheaper smaller decode); callers read the size from the Image. Reads the whole file either
  // way, so a truncated or corrupt file fails at any scale.
  virtual Image decode(unsigned scale_denom) = 0;
  // The same, but only `needed` and a pixel around it are sure to hold the image; the rest may
  // be left zero. A JPEG skips the inverse DCT of the rows above and below it and of the columns
  // beside it, to libjpeg's block edges (jpeg_skip_scanlines, jpeg_crop_scanline): the pixels it
  // gives are those of decode(scale_denom), to the bit, and the whole file is still read.
  virtual Image decode(unsigned scale_denom, const PixelRegion& needed) = 0;
};

// Opens `path` and reads its header, choosing the decoder by the file's first bytes. Throws
// DataError naming the file if it cannot be opened, is neither a JPEG nor a PNG, or its header is
// corrupt; decode() throws DataError for a truncated or corrupt image.
std::unique_ptr<ImageReader> open_image(const std::filesystem::path& path);

// The whole image at full size.
Image decode_image(const std::filesystem::path& path);

}  // namespace commsgd::data
