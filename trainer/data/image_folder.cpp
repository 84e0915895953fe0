#include "trainer/data/image_folder.hpp"

// jpeglib.h uses FILE and size_t without including their headers.
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "trainer/data/loaders.hpp"
#include "trainer/data/rng.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

constexpr std::array<float, 3> kMean{0.485F, 0.456F, 0.406F};
constexpr std::array<float, 3> kStd{0.229F, 0.224F, 0.225F};

DataError folder_error(const fs::path& path, std::string_view problem) {
  return DataError("image-folder: " + path.string() + ": " + std::string(problem));
}

// ---------------------------------------------------------------- indexing

bool has_jpeg_suffix(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".jpg" || extension == ".jpeg";
}

// Entries of `dir` that satisfy `keep`, sorted by name. Filesystem errors
// (permissions, a directory vanishing) become DataError naming the directory.
template <typename Keep>
std::vector<fs::path> sorted_entries(const fs::path& dir, Keep keep) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (keep(*it)) entries.push_back(it->path());
  }
  if (error) throw folder_error(dir, "cannot list: " + error.message());
  std::sort(entries.begin(), entries.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return entries;
}

// ---------------------------------------------------------------- decoding

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

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// Owns libjpeg's state. A separate member so that it is destroyed even when
// JpegReader's constructor throws; destroying a never-created (zeroed) struct
// is a no-op in libjpeg.
struct Decompressor {
  ErrorManager errors{};
  jpeg_decompress_struct cinfo{};

  Decompressor() = default;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }
};

class JpegReader {
 public:
  explicit JpegReader(const fs::path& path);
  JpegReader(const JpegReader&) = delete;
  JpegReader& operator=(const JpegReader&) = delete;

  int width() const { return static_cast<int>(state_.cinfo.image_width); }
  int height() const { return static_cast<int>(state_.cinfo.image_height); }

  // The image at 1/scale_denom of its size (1, 2, 4 or 8) as RGB.
  Image decode(unsigned scale_denom);

 private:
  template <typename Calls>
  void guarded(Calls calls);
  void request_rgb();

  fs::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;  // read by libjpeg until decode() ends
  Decompressor state_;
};

JpegReader::JpegReader(const fs::path& path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
  if (!file_) throw folder_error(path_, std::string("cannot open: ") + std::strerror(errno));
  state_.cinfo.err = jpeg_std_error(&state_.errors.pub);
  state_.errors.pub.error_exit = jump_on_error;
  state_.errors.pub.emit_message = on_message;
  guarded([this] {
    jpeg_create_decompress(&state_.cinfo);
    jpeg_stdio_src(&state_.cinfo, file_.get());
    jpeg_read_header(&state_.cinfo, TRUE);
  });
}

// Runs libjpeg calls, turning a longjmp out of them into DataError. A longjmp
// is only defined if no object with a destructor lives in the frames it skips,
// so `calls` must touch nothing but libjpeg and raw pointers.
template <typename Calls>
void JpegReader::guarded(Calls calls) {
  if (setjmp(state_.errors.jump) != 0) throw folder_error(path_, state_.errors.message);
  calls();
}

// libjpeg converts grayscale and YCbCr to RGB itself but not CMYK/YCCK (which
// some ImageNet files are); those are decoded as CMYK and converted in
// cmyk_to_rgb().
void JpegReader::request_rgb() {
  switch (state_.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_RGB:
    case JCS_YCbCr:
      state_.cinfo.out_color_space = JCS_RGB;
      return;
    case JCS_CMYK:
    case JCS_YCCK:
      state_.cinfo.out_color_space = JCS_CMYK;
      return;
    default:
      throw folder_error(path_, "unsupported JPEG colour space with " +
                                    std::to_string(state_.cinfo.num_components) + " components");
  }
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

Image JpegReader::decode(unsigned scale_denom) {
  jpeg_decompress_struct& cinfo = state_.cinfo;
  request_rgb();
  cinfo.scale_num = 1;
  cinfo.scale_denom = scale_denom;
  guarded([&cinfo] { jpeg_calc_output_dimensions(&cinfo); });

  const std::size_t stride = std::size_t{cinfo.output_width} * cinfo.output_components;
  std::vector<std::uint8_t> pixels(stride * cinfo.output_height);
  std::uint8_t* const base = pixels.data();
  guarded([&cinfo, base, stride] {
    jpeg_start_decompress(&cinfo);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = base + std::size_t{cinfo.output_scanline} * stride;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  });

  Image image{static_cast<int>(cinfo.output_width), static_cast<int>(cinfo.output_height), {}};
  image.rgb = cinfo.out_color_space == JCS_CMYK ? cmyk_to_rgb(pixels, cinfo.saw_Adobe_marker)
                                                : std::move(pixels);
  return image;
}

// ---------------------------------------------------------------- transforms

// The part of the (full-size) image that becomes the output, in pixels.
struct CropBox {
  double left = 0, top = 0, width = 0, height = 0;
  bool flip = false;
  // Train cuts the crop out before resizing, so bilinear samples past its edge
  // repeat the edge pixels; validation resizes the whole image before cropping,
  // so they read the pixels beyond.
  bool cut_out = false;
};

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

// torchvision.transforms.RandomResizedCrop.get_params with scale (0.08, 1) and
// ratio (3/4, 4/3), then RandomHorizontalFlip(0.5).
CropBox random_resized_crop(int width, int height, std::mt19937_64& rng) {
  constexpr double kMinScale = 0.08, kMinRatio = 3.0 / 4.0, kMaxRatio = 4.0 / 3.0;
  const double area = static_cast<double>(width) * height;
  CropBox box;
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target_area = area * (kMinScale + (1.0 - kMinScale) * draw_unit(rng));
    const double log_ratio =
        std::log(kMinRatio) + (std::log(kMaxRatio) - std::log(kMinRatio)) * draw_unit(rng);
    const double ratio = std::exp(log_ratio);
    const int w = round_half_even(std::sqrt(target_area * ratio));
    const int h = round_half_even(std::sqrt(target_area / ratio));
    if (w <= 0 || w > width || h <= 0 || h > height) continue;
    box.top = draw_int(rng, 0, height - h);
    box.left = draw_int(rng, 0, width - w);
    box.width = w;
    box.height = h;
    found = true;
  }
  if (!found) {  // the largest central crop whose ratio is within bounds
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

// torchvision Resize(round(S / fraction)) then CenterCrop(S), expressed as the
// region of the original image that ends up in the crop, so that the image is
// resampled once instead of twice.
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

// Decoding at 1/2, 1/4 or 1/8 size makes libjpeg skip most of the inverse DCT
// and colour conversion (several times faster for large photos) and is a
// properly low-passed downscale, which bilinear from full size is not. Take
// the smallest size at which the crop still has >= S pixels each way, so
// quality matches full-size decoding. Only these four scales: they are the
// ones libjpeg-turbo accelerates with SIMD, and every libjpeg supports.
unsigned choose_scale_denom(int width, int height, const CropBox& box, int output_size) {
  for (unsigned denom = 8; denom > 1; denom /= 2) {
    const double scaled_width = std::ceil(static_cast<double>(width) / denom);
    const double scaled_height = std::ceil(static_cast<double>(height) / denom);
    if (box.width * scaled_width / width >= output_size &&
        box.height * scaled_height / height >= output_size) {
      return denom;
    }
  }
  return 1;
}

// Source position and weights for one output row or column: bilinear with
// half-pixel centres (PyTorch's align_corners=false). No antialiasing:
// choose_scale_denom leaves at most a 2x downscale at ImageNet sizes, where
// bilinear aliases little.
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

// Writes the normalized C,H,W resampling of `box` (in `image`'s pixels). It
// costs about as much as decoding a small photo, so everything that depends on
// only a row, a column or a channel is computed outside the pixel loop.
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
  for (std::size_t y = 0; y < size; ++y) {
    const std::uint8_t* upper =
        image.rgb.data() + static_cast<std::size_t>(rows[y].low) * row_bytes;
    const std::uint8_t* lower =
        image.rgb.data() + static_cast<std::size_t>(rows[y].high) * row_bytes;
    for (std::size_t x = 0; x < size; ++x) {
      const std::size_t left = static_cast<std::size_t>(cols[x].low) * 3;
      const std::size_t right = static_cast<std::size_t>(cols[x].high) * 3;
      for (std::size_t c = 0; c < 3; ++c) {
        const float top = mix(upper[left + c], upper[right + c], cols[x].high_weight);
        const float bottom = mix(lower[left + c], lower[right + c], cols[x].high_weight);
        out[(c * size + y) * size + x] =
            mix(top, bottom, rows[y].high_weight) * scale[c] + offset[c];
      }
    }
  }
}

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

ImageFolder index_image_folder(const fs::path& root) {
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    throw folder_error(root, fs::exists(root, error) ? "not a directory" : "no such directory");
  }
  ImageFolder folder;
  // An entry that cannot be examined (e.g. a dangling link) is not a class or an image.
  const auto is_directory = [](const fs::directory_entry& e) {
    std::error_code ignored;
    return e.is_directory(ignored);
  };
  const auto is_jpeg = [](const fs::directory_entry& e) {
    std::error_code ignored;
    return e.is_regular_file(ignored) && has_jpeg_suffix(e.path());
  };
  for (const fs::path& class_dir : sorted_entries(root, is_directory)) {
    const std::vector<fs::path> images = sorted_entries(class_dir, is_jpeg);
    if (images.empty()) throw folder_error(class_dir, "no .jpg or .jpeg files in class directory");
    const auto label = static_cast<std::int32_t>(folder.classes.size());
    folder.classes.push_back(class_dir.filename().string());
    for (const fs::path& image : images) folder.files.push_back({image, label});
  }
  if (folder.classes.empty()) throw folder_error(root, "no class subdirectories");
  return folder;
}

Dataset load_image_folder(const DatasetOptions& options) {
  if (options.image_size < 1) {
    throw DataError("image-folder: --image-size " + std::to_string(options.image_size) +
                    " must be >= 1");
  }
  const fs::path root(options.path);
  Dataset ds;
  ds.name = "image-folder";
  ds.shape = {3, options.image_size, options.image_size};
  ds.train_images = index_image_folder(root / "train");
  ds.validation_images = index_image_folder(root / "val");
  // Labels are positions in the sorted class list, so both splits must list the same classes.
  if (ds.validation_images->classes != ds.train_images->classes) {
    throw folder_error(root / "val",
                       "its class directories differ from those of " + (root / "train").string());
  }
  ds.num_classes = static_cast<int>(ds.train_images->classes.size());
  return ds;
}

Image decode_jpeg(const fs::path& path) {
  return JpegReader(path).decode(1);
}

void load_image_sample(const fs::path& path, const ImageTransform& transform, std::mt19937_64& rng,
                       std::span<float> out) {
  const int output_size = transform.output_size;
  if (output_size < 1 || transform.squash_size < 0 || !(transform.val_crop_fraction > 0) ||
      transform.val_crop_fraction > 1) {
    throw std::invalid_argument(
        "load_image_sample: need output size >= 1, squash size >= 0 and a validation crop "
        "fraction in (0, 1]");
  }
  const std::size_t numel = 3 * static_cast<std::size_t>(output_size) * output_size;
  if (out.size() != numel) {
    throw std::invalid_argument("load_image_sample: out holds " + std::to_string(out.size()) +
                                " floats, expected " + std::to_string(numel));
  }
  const auto crop = [&](int width, int height) {
    return transform.mode == ImageMode::train
               ? random_resized_crop(width, height, rng)
               : center_crop(width, height, output_size, transform.val_crop_fraction);
  };
  JpegReader reader(path);
  if (transform.squash_size > 0) {
    // Decoded at full size, as the originals' OpenCV did before squashing.
    const Image square = squash(reader.decode(1), transform.squash_size);
    resample(square, crop(square.width, square.height), output_size, out);
    return;
  }
  const int width = reader.width();
  const int height = reader.height();
  // The crop is drawn on the full-size image, so the random stream and the
  // region chosen do not depend on the decoding scale.
  CropBox box = crop(width, height);
  const Image image = reader.decode(choose_scale_denom(width, height, box, output_size));
  const double sx = static_cast<double>(image.width) / width;
  const double sy = static_cast<double>(image.height) / height;
  box.left *= sx;
  box.top *= sy;
  box.width *= sx;
  box.height *= sy;
  resample(image, box, output_size, out);
}

// ---------------------------------------------------------------- loader

ImageFolderLoader::ImageFolderLoader(ImageFolder folder, const ImageLoaderOptions& options)
    : folder_(std::move(folder)),
      transform_{options.output_size, options.mode, options.squash_size,
                 options.val_crop_fraction} {
  if (options.threads < 1 || options.prefetch < 1 || options.output_size < 1) {
    throw std::invalid_argument("ImageFolderLoader: threads (" + std::to_string(options.threads) +
                                "), prefetch (" + std::to_string(options.prefetch) +
                                ") and output_size (" + std::to_string(options.output_size) +
                                ") must be >= 1");
  }
  slots_.resize(options.prefetch);
  try {
    for (std::size_t t = 0; t < options.threads; ++t) {
      workers_.emplace_back([this] { worker_loop(); });
    }
  } catch (...) {
    stop_workers();
    throw;
  }
}

ImageFolderLoader::~ImageFolderLoader() {
  stop_workers();
}

void ImageFolderLoader::stop_workers() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_changed_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ImageFolderLoader::start_epoch(std::span<const std::uint32_t> order, std::size_t batch_size,
                                    std::uint64_t seed) {
  if (batch_size == 0) throw std::invalid_argument("ImageFolderLoader: batch_size must be >= 1");
  const auto bad = std::find_if(order.begin(), order.end(),
                                [&](std::uint32_t index) { return index >= folder_.size(); });
  if (bad != order.end()) {
    throw std::out_of_range("ImageFolderLoader: index " + std::to_string(*bad) +
                            " out of range for " + std::to_string(folder_.size()) + " images");
  }
  std::unique_lock lock(mutex_);
  abandon_epoch(lock);
  order_.assign(order.begin(), order.end());
  batch_size_ = batch_size;
  seed_ = seed;
  lock.unlock();
  work_changed_.notify_all();
}

bool ImageFolderLoader::next(ImageBatch& out) {
  std::unique_lock lock(mutex_);
  if (next_batch_ * batch_size_ >= order_.size()) return false;
  const std::size_t batch = next_batch_;
  Slot& slot = slots_[batch % slots_.size()];
  batch_changed_.wait(lock, [&] { return slot.batch == batch && slot.pending == 0; });
  if (slot.error) {
    const std::exception_ptr error = slot.error;
    abandon_epoch(lock);
    std::rethrow_exception(error);
  }
  std::swap(out, slot.data);
  ++next_batch_;
  lock.unlock();
  work_changed_.notify_all();  // the window of batches in flight moved on
  return true;
}

// Called with the lock held. Workers still decoding write into the slots, so
// they are only reset once those samples are done.
void ImageFolderLoader::abandon_epoch(std::unique_lock<std::mutex>& lock) {
  order_.clear();
  next_claim_ = 0;
  next_batch_ = 0;
  batch_changed_.wait(lock, [&] { return in_progress_ == 0; });
  for (Slot& slot : slots_) {
    slot.batch = kNoBatch;
    slot.error = nullptr;
  }
}

bool ImageFolderLoader::work_available() const {
  return next_claim_ < order_.size() && next_claim_ / batch_size_ < next_batch_ + slots_.size();
}

// Called with the lock held: takes the next sample of the epoch, preparing its
// batch's slot if it is the batch's first, and returns where it goes.
ImageFolderLoader::Claim ImageFolderLoader::claim_sample() {
  const std::size_t position = next_claim_++;
  const std::size_t batch = position / batch_size_;
  const std::size_t row = position % batch_size_;
  Slot& slot = slots_[batch % slots_.size()];
  const std::size_t numel = sample_shape().numel();
  if (slot.batch != batch) {
    slot.batch = batch;
    slot.pending = std::min(batch_size_, order_.size() - batch * batch_size_);
    slot.data.features.resize(slot.pending * numel);
    slot.data.labels.resize(slot.pending);
    slot.error = nullptr;
  }
  const std::uint32_t index = order_[position];
  slot.data.labels[row] = folder_.files[index].label;
  ++in_progress_;
  return {&slot, index, std::span<float>(slot.data.features).subspan(row * numel, numel)};
}

void ImageFolderLoader::worker_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_changed_.wait(lock, [&] { return stopping_ || work_available(); });
    if (stopping_) return;
    const Claim claim = claim_sample();
    std::mt19937_64 rng(derive_seed(seed_, claim.index));
    lock.unlock();
    std::exception_ptr error;
    try {
      load_image_sample(folder_.files[claim.index].path, transform_, rng, claim.out);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --in_progress_;
    if (error && !claim.slot->error) claim.slot->error = error;
    --claim.slot->pending;
    batch_changed_.notify_all();
  }
}

}  // namespace commsgd::data
