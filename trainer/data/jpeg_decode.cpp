#include "trainer/data/jpeg_decode.hpp"

// jpeglib.h uses FILE and size_t without including their headers.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <string>
#include <utility>

#include "trainer/data/image_folder_index.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

struct ErrorManager {
  jpeg_error_mgr pub;  // first, so libjpeg's pointer to it is a pointer to the whole
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

// libjpeg is C: an exception thrown through its frames is undefined, so errors
// leave it by longjmp to the setjmp in guarded() and are thrown from there.
[[noreturn]] void jump_on_error(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg only warns about a truncated file and pads the image with grey;
// training on that silently is worse than stopping, so (as in Pillow) it is an
// error. Other warnings (e.g. stray bytes between markers) leave a usable image
// and are dropped, so that worker threads do not flood stderr.
void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) jump_on_error(cinfo);
  ++cinfo->err->num_warnings;
}

// Adobe applications, which write nearly all CMYK JPEGs, store the channels
// inverted (255 = no ink) and flag that with their APP14 marker.
std::vector<std::uint8_t> cmyk_to_rgb(const std::vector<std::uint8_t>& cmyk, bool inverted) {
  std::vector<std::uint8_t> rgb(cmyk.size() / 4 * 3);
  for (std::size_t p = 0; p < cmyk.size() / 4; ++p) {
    const auto ink_free = [&](std::size_t i) {
      const int v = cmyk[4 * p + i];
      return inverted ? v : 255 - v;
    };
    const int k = ink_free(3);
    for (std::size_t c = 0; c < 3; ++c) {
      rgb[3 * p + c] = static_cast<std::uint8_t>((ink_free(c) * k + 127) / 255);
    }
  }
  return rgb;
}

}  // namespace

// Owns libjpeg's state. A separate member so that it is destroyed even when
// JpegReader's constructor throws; destroying a never-created (zeroed) struct
// is a no-op in libjpeg.
struct JpegReader::Decompressor {
  ErrorManager errors{};
  jpeg_decompress_struct cinfo{};

  Decompressor() = default;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }
};

JpegReader::JpegReader(const fs::path& path, OpenFile file)
    : path_(path), file_(std::move(file)), state_(std::make_unique<Decompressor>()) {
  state_->cinfo.err = jpeg_std_error(&state_->errors.pub);
  state_->errors.pub.error_exit = jump_on_error;
  state_->errors.pub.emit_message = on_message;
  guarded([this] {
    jpeg_create_decompress(&state_->cinfo);
    jpeg_stdio_src(&state_->cinfo, file_.get());
    jpeg_read_header(&state_->cinfo, TRUE);
  });
}

JpegReader::~JpegReader() = default;

int JpegReader::width() const {
  return static_cast<int>(state_->cinfo.image_width);
}

int JpegReader::height() const {
  return static_cast<int>(state_->cinfo.image_height);
}

// Runs libjpeg calls, turning a longjmp out of them into DataError. A longjmp
// is only defined if no object with a destructor lives in the frames it skips,
// so `calls` must touch nothing but libjpeg and raw pointers.
template <typename Calls>
void JpegReader::guarded(Calls calls) {
  if (setjmp(state_->errors.jump) != 0) throw folder_error(path_, state_->errors.message);
  calls();
}

// libjpeg converts grayscale and YCbCr to RGB itself but not CMYK/YCCK (which
// some ImageNet files are); those are decoded as CMYK and converted in
// cmyk_to_rgb().
void JpegReader::request_rgb() {
  switch (state_->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_RGB:
    case JCS_YCbCr:
      state_->cinfo.out_color_space = JCS_RGB;
      return;
    case JCS_CMYK:
    case JCS_YCCK:
      state_->cinfo.out_color_space = JCS_CMYK;
      return;
    default:
      throw folder_error(path_, "unsupported JPEG colour space with " +
                                    std::to_string(state_->cinfo.num_components) + " components");
  }
}

Image JpegReader::decode(unsigned scale_denom) {
  return decode(scale_denom,
                PixelRegion{0, 0, static_cast<double>(width()), static_cast<double>(height())});
}

Image JpegReader::decode(unsigned scale_denom, const PixelRegion& needed) {
  jpeg_decompress_struct& cinfo = state_->cinfo;
  request_rgb();
  cinfo.scale_num = 1;
  cinfo.scale_denom = scale_denom;
  guarded([&cinfo] { jpeg_calc_output_dimensions(&cinfo); });

  // `needed` at the output's scale, a pixel wider each way (bilinear reads the next pixel), and
  // kMargin more: at a region's edges (the last column, the first row after a skip) fancy
  // upsampling lacks the chroma beyond and gives other pixels than the whole decode does.
  constexpr double kMargin = 1 + 8;
  const double sx = static_cast<double>(cinfo.output_width) / cinfo.image_width;
  const double sy = static_cast<double>(cinfo.output_height) / cinfo.image_height;
  const auto bounded = [](double v, JDIMENSION size) {
    return static_cast<JDIMENSION>(std::clamp(v, 0.0, static_cast<double>(size)));
  };
  JDIMENSION first_column = bounded(std::floor(needed.left * sx) - kMargin, cinfo.output_width);
  const JDIMENSION end_column =
      bounded(std::ceil((needed.left + needed.width) * sx) + kMargin, cinfo.output_width);
  const JDIMENSION first_row = bounded(std::floor(needed.top * sy) - kMargin, cinfo.output_height);
  const JDIMENSION end_row =
      bounded(std::ceil((needed.top + needed.height) * sy) + kMargin, cinfo.output_height);
  JDIMENSION columns = std::max(end_column, first_column + 1) - first_column;

  const JDIMENSION full_width = cinfo.output_width;  // jpeg_crop_scanline changes it
  const std::size_t components = static_cast<std::size_t>(cinfo.out_color_components);
  const std::size_t stride = std::size_t{full_width} * components;
  std::vector<std::uint8_t> pixels(stride * cinfo.output_height);
  std::uint8_t* const base = pixels.data();
  // jpeg_crop_scanline widens the columns to its blocks' edges and gives each row from the first
  // of them, so a row is read into its place in the full-width image.
  guarded([&cinfo, base, stride, components, &first_column, &columns, first_row, end_row] {
    jpeg_start_decompress(&cinfo);
    jpeg_crop_scanline(&cinfo, &first_column, &columns);
    jpeg_skip_scanlines(&cinfo, first_row);
    while (cinfo.output_scanline < end_row) {
      JSAMPROW row = base + std::size_t{cinfo.output_scanline} * stride + first_column * components;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline);
    jpeg_finish_decompress(&cinfo);
  });

  Image image{static_cast<int>(full_width), static_cast<int>(cinfo.output_height), {}};
  image.rgb = cinfo.out_color_space == JCS_CMYK ? cmyk_to_rgb(pixels, cinfo.saw_Adobe_marker)
                                                : std::move(pixels);
  return image;
}

}  // namespace commsgd::data
