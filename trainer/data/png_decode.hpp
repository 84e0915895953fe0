// Decoding a PNG with libpng into 8-bit RGB as PIL's Image.convert("RGB") gives it, which is what
// torchvision's ImageFolder trains on: a palette looked up, grey repeated in R, G and B, alpha and
// transparency dropped (not blended), no gamma correction; 16-bit samples keep their high byte.
#pragma once

#include <filesystem>
#include <memory>

#include "trainer/data/image_decode.hpp"

namespace commsgd::data {

// libpng's state is defined in png_decode.cpp and held through a pointer, so that includers need
// no libpng headers.
class PngReader final : public ImageReader {
 public:
  // Reads the header from `file`, positioned at its start. Throws DataError naming `path` if it
  // is not a PNG or its header is corrupt; decode() throws it for a truncated or corrupt image.
  PngReader(const std::filesystem::path& path, OpenFile file);
  ~PngReader() override;
  PngReader(const PngReader&) = delete;
  PngReader& operator=(const PngReader&) = delete;

  int width() const override;
  int height() const override;
  // At full size whatever scale is asked: PNG has no cheaper way to a smaller image.
  Image decode(unsigned scale_denom) override;
  Image decode(unsigned scale_denom, const PixelRegion& needed) override;

 private:
  struct Decoder;

  template <typename Calls>
  void guarded(Calls calls);

  std::filesystem::path path_;
  OpenFile file_;                   // read by libpng until decode() ends
  std::unique_ptr<Decoder> state_;  // destroyed before file_ is closed
};

}  // namespace commsgd::data
