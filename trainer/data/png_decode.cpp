#include "trainer/data/png_decode.hpp"

#include <png.h>

#include <csetjmp>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "trainer/data/image_folder_index.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMessageLength = 200;

// libpng is C: an exception thrown through its frames is undefined, so errors leave it by
// longjmp to the setjmp in guarded() and are thrown from there, with the message kept here.
[[noreturn]] void jump_on_error(png_structp png, png_const_charp message) {
  char* kept = static_cast<char*>(png_get_error_ptr(png));
  std::strncpy(kept, message, kMessageLength - 1);
  png_longjmp(png, 1);
}

// Warnings (an ancillary chunk with a bad CRC, an unknown chunk) leave a usable image, as they do
// for PIL; dropped, so that loader threads do not flood stderr.
void ignore_warning(png_structp, png_const_charp) {}

}  // namespace

// Owns libpng's state; a separate member so that it is destroyed even when PngReader's
// constructor throws. png_destroy_read_struct does nothing for structs never created.
struct PngReader::Decoder {
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[kMessageLength] = {};

  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder() { png_destroy_read_struct(&png, &info, nullptr); }
};

PngReader::PngReader(const fs::path& path, OpenFile file)
    : path_(path), file_(std::move(file)), state_(std::make_unique<Decoder>()) {
  state_->png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, state_->message, jump_on_error, ignore_warning);
  if (state_->png != nullptr) state_->info = png_create_info_struct(state_->png);
  if (state_->info == nullptr) throw folder_error(path_, "PNG: out of memory for libpng");
  guarded([this] {
    png_init_io(state_->png, file_.get());
    png_read_info(state_->png, state_->info);
  });
}

PngReader::~PngReader() = default;

int PngReader::width() const {
  return static_cast<int>(png_get_image_width(state_->png, state_->info));
}

int PngReader::height() const {
  return static_cast<int>(png_get_image_height(state_->png, state_->info));
}

// Runs libpng calls, turning a longjmp out of them into DataError. A longjmp is only defined if
// no object with a destructor lives in the frames it skips, so `calls` must touch nothing but
// libpng and raw pointers.
template <typename Calls>
void PngReader::guarded(Calls calls) {
  if (setjmp(png_jmpbuf(state_->png)) != 0) {
    throw folder_error(path_, std::string("PNG: ") + state_->message);
  }
  calls();
}

Image PngReader::decode(unsigned /*scale_denom*/) {
  png_structp png = state_->png;
  png_infop info = state_->info;
  guarded([png, info] {
    png_set_palette_to_rgb(png);
    png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
  });
  Image image{width(), height(), {}};
  const std::size_t stride = std::size_t{3} * static_cast<std::size_t>(image.width);
  // The rows below are written by libpng as it was told above; a layout it does not turn into
  // 8-bit RGB would overrun them, so it is refused rather than trusted.
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != stride) {
    throw folder_error(path_, "PNG: a pixel layout not converted to 8-bit RGB");
  }
  image.rgb.resize(stride * static_cast<std::size_t>(image.height));
  std::vector<png_bytep> rows(static_cast<std::size_t>(image.height));
  for (std::size_t y = 0; y < rows.size(); ++y) rows[y] = image.rgb.data() + y * stride;
  png_bytepp row_pointers = rows.data();
  guarded([png, row_pointers] {
    png_read_image(png, row_pointers);
    png_read_end(png, nullptr);
  });
  return image;
}

// A PNG has no cheaper partial decode: all of it, whatever is needed.
Image PngReader::decode(unsigned scale_denom, const PixelRegion& /*needed*/) {
  return decode(scale_denom);
}

}  // namespace commsgd::data
