// Decoding JPEG files with libjpeg into 8-bit RGB, at full size or, through libjpeg's DCT
// scaling, at 1/2, 1/4 or 1/8 of it.
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

// Decodes a baseline or progressive JPEG (RGB, grayscale or CMYK) at full size.
// Throws DataError naming the file if it cannot be read, is not a JPEG, is
// truncated or corrupt, or has an unsupported colour space.
Image decode_jpeg(const std::filesystem::path& path);

// A JPEG file opened and its header read, so that its size is known before it is decoded and the
// scale to decode it at can depend on that size. libjpeg's state is defined in jpeg_decode.cpp
// and held through a pointer, so that includers need no libjpeg headers (which also define macros
// such as TRUE and FALSE).
class JpegReader {
 public:
  // Throws DataError as decode_jpeg.
  explicit JpegReader(const std::filesystem::path& path);
  ~JpegReader();
  JpegReader(const JpegReader&) = delete;
  JpegReader& operator=(const JpegReader&) = delete;

  int width() const;
  int height() const;

  // The image at 1/scale_denom of its size (1, 2, 4 or 8) as RGB.
  Image decode(unsigned scale_denom);

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  struct Decompressor;

  template <typename Calls>
  void guarded(Calls calls);
  void request_rgb();

  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;  // read by libjpeg until decode() ends
  std::unique_ptr<Decompressor> state_;          // destroyed before file_ is closed
};

}  // namespace commsgd::data
