// The trainer's one way to read mini-batches of a split, however it is stored:
// gathered from memory (with batch.hpp's augmentation), or decoded from JPEG
// files by a prefetching ImageFolderLoader. Reads follow an epoch's order, which
// is what lets the loader decode ahead; reading any batch other than the next
// one (a resumed epoch, a worker going round its shard again) restarts the
// loader there, at the cost of the batches it had decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trainer/data/batch.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/image_folder.hpp"

namespace commsgd::data {

class BatchReader {
 public:
  // `split` is read in place and must outlive the reader. The augmentation
  // draws from a state that starts at `rng_state` and runs on across epochs.
  BatchReader(const Split& split, const SampleShape& shape, const Augmentation& augmentation,
              std::uint64_t rng_state);
  // Images are transformed per `options.mode`; the training transform draws
  // from a seed derived from (`rng_state`, epoch), so that a batch is the same
  // however the epoch was reached.
  BatchReader(const ImageFolder& folder, const ImageLoaderOptions& options,
              std::uint64_t rng_state);

  // Reads now come from `order` (copied) in batches of batch_size, the last one
  // possibly smaller.
  void begin_epoch(std::span<const std::uint32_t> order, std::size_t batch_size, int epoch);

  // Writes the samples order[first, first + count) to out_features (count x
  // sample numel) and their labels to out_labels (count). count must be
  // batch_size, or what is left of the order.
  void read(std::size_t first, std::size_t count, std::span<float> out_features,
            std::span<std::int64_t> out_labels);

  // The augmentation's state, for checkpoints.
  std::uint64_t rng_state() const { return rng_state_; }
  void set_rng_state(std::uint64_t state) { rng_state_ = state; }

 private:
  const Split* split_ = nullptr;  // in memory
  SampleShape shape_;
  Augmentation augmentation_;
  std::unique_ptr<ImageFolderLoader> loader_;  // or decoded from files
  ImageBatch decoded_;

  std::uint64_t rng_state_;
  std::vector<std::uint32_t> order_;
  std::size_t batch_size_ = 1;
  std::uint64_t epoch_seed_ = 0;
  std::size_t loader_next_ = 0;  // where in order_ the loader's next batch starts
  bool loader_started_ = false;
};

}  // namespace commsgd::data
