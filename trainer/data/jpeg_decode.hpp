// Decoding a baseline or progressive JPEG (RGB, grayscale or CMYK) with libjpeg into 8-bit RGB,
// at full size or, through libjpeg's DCT scaling, at 1/2, 1/4 or 1/8 of it.
#pragma once

#include <filesystem>
#include <memory>

#include "trainer/data/image_decode.hpp"

namespace commsgd::data {

// libjpeg's state is defined in jpeg_decode.cpp and held through a pointer, so that includers
// need no libjpeg headers (which also define macros such as TRUE and FALSE).
class JpegReader final : public ImageReader {
 public:
  // Reads the header from `file`, positioned at its start. Throws DataError naming `path` if it
  // is not a JPEG or its header is corrupt; decode() throws it for a truncated or corrupt image or
  // an unsupported colour space.
  JpegReader(const std::filesystem::path& path, OpenFile file);
  ~JpegReader() override;
  JpegReader(const JpegReader&) = delete;
  JpegReader& operator=(const JpegReader&) = delete;

  int width() const override;
  int height() const override;
  Image decode(unsigned scale_denom) override;
  Image decode(unsigned scale_denom, const PixelRegion& needed) override;

 private:
  struct Decompressor;

  template <typename Calls>
  void guarded(Calls calls);
  void request_rgb();

  std::filesystem::path path_;
  OpenFile file_;                        // read by libjpeg until decode() ends
  std::unique_ptr<Decompressor> state_;  // destroyed before file_ is closed
};

}  // namespace commsgd::data
