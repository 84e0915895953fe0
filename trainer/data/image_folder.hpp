// ImageNet-style image folders (root/<class>/<image>.JPEG) decoded on the fly:
// the index (image_folder_index.hpp), JPEG and PNG decoding (image_decode.hpp) and the
// torchvision-style transforms (image_transforms.hpp) combined per sample, and a
// multi-threaded prefetching batch loader. Unlike the in-memory data sets of
// dataset.hpp, ImageNet does not fit in memory as floats, so images are decoded
// per batch. Independent of LibTorch, like the rest of trainer/data.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "trainer/data/dataset.hpp"
#include "trainer/data/image_decode.hpp"
#include "trainer/data/image_folder_index.hpp"
#include "trainer/data/image_transforms.hpp"

namespace commsgd::data {

enum class ImageMode {
  // RandomResizedCrop (scale 0.08..1, ratio 3/4..4/3) + horizontal flip, p = 1/2.
  train,
  // Shorter side resized to round(S / val_crop_fraction), then the central S x S.
  validation,
};

// How a file becomes the model's S x S input.
struct ImageTransform {
  int output_size = 224;  // S
  ImageMode mode = ImageMode::train;
  // > 0: the whole image is first resized to squash_size x squash_size, its aspect ratio given
  // up (squash() in image_transforms.hpp), as the gTop-k and Gaussian-k code stored ImageNet in its
  // HDF5 file; the crops are then taken from that square.
  int squash_size = 0;
  // validation: 0.875 is torchvision's Resize(256) then CenterCrop(224); 1 keeps the whole
  // shorter side (the centre crop of an S x S image is all of it).
  double val_crop_fraction = 0.875;
  ResizedCrop resized_crop = ResizedCrop::torchvision;  // train's crop
};

// Decodes `path` and writes its transformed S x S image to `out` (3 * S * S
// floats, C,H,W), scaled to [0, 1] and normalized with the ImageNet mean and
// std. Train mode draws from `rng` (validation leaves it alone); only the
// engine's raw output is used, never std:: distributions, so a seed gives the
// same image with every standard library.
// Throws DataError as open_image and decode, std::invalid_argument on a wrong out size,
// output_size < 1, squash_size < 0 or val_crop_fraction outside (0, 1].
void load_image_sample(const std::filesystem::path& path, const ImageTransform& transform,
                       std::mt19937_64& rng, std::span<float> out);

struct ImageBatch {
  std::vector<float> features;       // size() * 3 * S * S, C,H,W per sample
  std::vector<std::int32_t> labels;  // size()

  std::size_t size() const { return labels.size(); }
};

struct ImageLoaderOptions {
  int output_size = 224;     // S: samples are 3 x S x S
  std::size_t threads = 4;   // decoding threads, >= 1
  std::size_t prefetch = 2;  // batches decoded ahead of the consumer, >= 1
  ImageMode mode = ImageMode::train;
  int squash_size = 0;                                  // as ImageTransform's
  double val_crop_fraction = 0.875;                     // as ImageTransform's
  ResizedCrop resized_crop = ResizedCrop::torchvision;  // as ImageTransform's
};

// Decodes the batches of an epoch on worker threads, at most `prefetch`
// batches ahead, and hands them out in order. Workers take single samples,
// earliest batch first, so all threads help finish the batch the consumer waits
// for. Sample i of an epoch is transformed with an engine seeded from (epoch
// seed, order[i]), so the output depends on neither the thread count nor the
// scheduling (a sample listed twice in one order gets the same augmentation).
class ImageFolderLoader {
 public:
  // Throws std::invalid_argument on threads, prefetch or output_size < 1.
  ImageFolderLoader(ImageFolder folder, const ImageLoaderOptions& options);
  // Stops the workers, abandoning any epoch in progress; waits only for the
  // samples being decoded at that moment.
  ~ImageFolderLoader();
  ImageFolderLoader(const ImageFolderLoader&) = delete;
  ImageFolderLoader& operator=(const ImageFolderLoader&) = delete;

  const ImageFolder& folder() const { return folder_; }
  SampleShape sample_shape() const { return {3, transform_.output_size, transform_.output_size}; }

  // Abandons the current epoch, if any, and starts decoding batches of
  // batch_size consecutive entries of `order` (copied; the last batch may be
  // smaller). Throws std::invalid_argument on batch_size 0, std::out_of_range
  // on an index >= folder().size().
  void start_epoch(std::span<const std::uint32_t> order, std::size_t batch_size,
                   std::uint64_t seed);

  // The epoch's next batch, swapped into `out` (whose buffers are recycled);
  // false once the epoch is over. A sample that failed to load is rethrown
  // here, when its batch is due; the epoch is then over.
  bool next(ImageBatch& out);

 private:
  struct Slot {
    std::size_t batch = kNoBatch;  // the batch being assembled here
    std::size_t pending = 0;       // its samples not yet written
    ImageBatch data;
    std::exception_ptr error;
  };
  static constexpr std::size_t kNoBatch = static_cast<std::size_t>(-1);

  struct Claim {  // a sample a worker decodes outside the lock
    Slot* slot;
    std::uint32_t index;   // into folder_.files
    std::span<float> out;  // its place in slot->data.features
  };

  void worker_loop();
  bool work_available() const;
  Claim claim_sample();
  void abandon_epoch(std::unique_lock<std::mutex>& lock);
  void stop_workers();

  const ImageFolder folder_;
  const ImageTransform transform_;

  std::mutex mutex_;
  std::condition_variable work_changed_;   // workers wait here
  std::condition_variable batch_changed_;  // the consumer waits here
  bool stopping_ = false;
  std::vector<std::uint32_t> order_;
  std::size_t batch_size_ = 1;
  std::uint64_t seed_ = 0;
  std::size_t next_claim_ = 0;   // position in order_ of the next sample to decode
  std::size_t next_batch_ = 0;   // the batch next() returns next
  std::size_t in_progress_ = 0;  // samples being decoded outside the lock
  std::vector<Slot> slots_;      // batch b is assembled in slots_[b % prefetch]
  std::vector<std::thread> workers_;
};

}  // namespace commsgd::data
