#include "trainer/data/batch_reader.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "trainer/data/rng.hpp"

namespace commsgd::data {

BatchReader::BatchReader(const Split& split, const SampleShape& shape,
                         const Augmentation& augmentation, std::uint64_t rng_state)
    : split_(&split), shape_(shape), augmentation_(augmentation), rng_state_(rng_state) {}

BatchReader::BatchReader(const ImageFolder& folder, const ImageLoaderOptions& options,
                         std::uint64_t rng_state)
    : loader_(std::make_unique<ImageFolderLoader>(folder, options)), rng_state_(rng_state) {
  shape_ = loader_->sample_shape();
}

void BatchReader::begin_epoch(std::span<const std::uint32_t> order, std::size_t batch_size,
                              int epoch) {
  if (batch_size == 0) throw std::invalid_argument("BatchReader: batch_size must be >= 1");
  order_.assign(order.begin(), order.end());
  batch_size_ = batch_size;
  epoch_seed_ = derive_seed(rng_state_, static_cast<std::uint64_t>(epoch));
  loader_started_ = false;
}

void BatchReader::read(std::size_t first, std::size_t count, std::span<float> out_features,
                       std::span<std::int64_t> out_labels) {
  if (first > order_.size() || count != std::min(batch_size_, order_.size() - first)) {
    throw std::invalid_argument("BatchReader: no batch of " + std::to_string(count) +
                                " samples starts at " + std::to_string(first) + " of " +
                                std::to_string(order_.size()));
  }
  const std::span<const std::uint32_t> batch = std::span(order_).subspan(first, count);
  if (!loader_) {
    gather_batch(*split_, shape_, batch, out_features, out_labels, augmentation_, rng_state_);
    return;
  }
  if (out_features.size() != count * shape_.numel() || out_labels.size() != count) {
    throw std::invalid_argument("BatchReader: output buffers do not hold " + std::to_string(count) +
                                " samples");
  }
  if (!loader_started_ || first != loader_next_) {
    loader_->start_epoch(std::span(order_).subspan(first), batch_size_, epoch_seed_);
    loader_started_ = true;
  }
  loader_next_ = first + count;
  // The loader's batches are cut from where it started, which is this read's
  // first sample, so its next batch is exactly this one.
  if (!loader_->next(decoded_) || decoded_.size() != count) {
    throw std::logic_error("BatchReader: the loader's batch at " + std::to_string(first) +
                           " is not the one read");
  }
  std::copy(decoded_.features.begin(), decoded_.features.end(), out_features.begin());
  std::copy(decoded_.labels.begin(), decoded_.labels.end(), out_labels.begin());
}

}  // namespace commsgd::data
