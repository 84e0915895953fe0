#include "trainer/data/image_folder.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "trainer/data/image_decode.hpp"
#include "trainer/data/image_folder_index.hpp"
#include "trainer/data/image_transforms.hpp"
#include "trainer/data/loaders.hpp"
#include "trainer/data/rng.hpp"

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

// Decoding at 1/2, 1/4 or 1/8 size makes libjpeg skip most of the inverse DCT
// and colour conversion and is a properly low-passed downscale, which bilinear
// from full size is not. Take
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

}  // namespace

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
               ? random_resized_crop(width, height, rng, transform.resized_crop)
               : center_crop(width, height, output_size, transform.val_crop_fraction);
  };
  const std::unique_ptr<ImageReader> reader = open_image(path);
  if (transform.squash_size > 0) {
    // Decoded at full size, as the originals' OpenCV did before squashing.
    const Image square = squash(reader->decode(1), transform.squash_size);
    resample(square, crop(square.width, square.height), output_size, out);
    return;
  }
  const int width = reader->width();
  const int height = reader->height();
  // The crop is drawn on the full-size image, so the random stream and the
  // region chosen do not depend on the decoding scale.
  CropBox box = crop(width, height);
  const Image image = reader->decode(choose_scale_denom(width, height, box, output_size),
                                     PixelRegion{box.left, box.top, box.width, box.height});
  const double sx = static_cast<double>(image.width) / width;
  const double sy = static_cast<double>(image.height) / height;
  box.left *= sx;
  box.top *= sy;
  box.width *= sx;
  box.height *= sy;
  resample(image, box, output_size, out);
}

ImageFolderLoader::ImageFolderLoader(ImageFolder folder, const ImageLoaderOptions& options)
    : folder_(std::move(folder)),
      transform_{options.output_size, options.mode, options.squash_size, options.val_crop_fraction,
                 options.resized_crop} {
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
