#include "trainer/data/batch.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "trainer/data/rng.hpp"

namespace commsgd::data {

namespace {

// Output pixel (y, x) reads input pixel (y + dy, x' + dx), where x' is x
// mirrored when flipping: cropping the padded image is a shift, so no padded
// copy is ever materialized.
struct SampleTransform {
  int dy = 0;
  int dx = 0;
  bool flip = false;
};

SampleTransform draw_transform(const Augmentation& augmentation, std::uint64_t& state) {
  SampleTransform transform;
  if (augmentation.random_crop) {
    const auto choices = static_cast<std::uint64_t>(2 * augmentation.crop_padding + 1);
    transform.dy = static_cast<int>(uniform_below(state, choices)) - augmentation.crop_padding;
    transform.dx = static_cast<int>(uniform_below(state, choices)) - augmentation.crop_padding;
  }
  if (augmentation.horizontal_flip) transform.flip = (splitmix64_next(state) >> 63) != 0;
  return transform;
}

void transform_sample(const float* in, float* out, const SampleShape& shape,
                      const SampleTransform& transform, std::span<const float> fill) {
  const int height = shape.height;
  const int width = shape.width;
  for (int c = 0; c < shape.channels; ++c) {
    const float border = fill.empty() ? 0.0F : fill[static_cast<std::size_t>(c)];
    for (int y = 0; y < height; ++y) {
      float* out_row = out + (static_cast<std::size_t>(c) * height + y) * width;
      const int src_y = y + transform.dy;
      if (src_y < 0 || src_y >= height) {
        std::fill_n(out_row, width, border);
        continue;
      }
      const float* in_row = in + (static_cast<std::size_t>(c) * height + src_y) * width;
      for (int x = 0; x < width; ++x) {
        const int src_x = (transform.flip ? width - 1 - x : x) + transform.dx;
        out_row[x] = (src_x >= 0 && src_x < width) ? in_row[src_x] : border;
      }
    }
  }
}

void check_sizes(const Split& split, std::size_t numel, std::size_t batch,
                 std::size_t feature_slots, std::size_t label_slots) {
  if (split.features.size() != split.size() * numel) {
    throw std::invalid_argument("gather_batch: split has " + std::to_string(split.features.size()) +
                                " features, expected " + std::to_string(split.size()) + " x " +
                                std::to_string(numel));
  }
  if (feature_slots != batch * numel || label_slots != batch) {
    throw std::invalid_argument("gather_batch: output buffers hold " +
                                std::to_string(feature_slots) + " features and " +
                                std::to_string(label_slots) + " labels, expected " +
                                std::to_string(batch * numel) + " and " + std::to_string(batch));
  }
}

}  // namespace

void gather_batch(const Split& split, const SampleShape& shape,
                  std::span<const std::uint32_t> indices, std::span<float> out_features,
                  std::span<std::int64_t> out_labels, const Augmentation& augmentation,
                  std::uint64_t& rng_state) {
  const std::size_t numel = shape.numel();
  check_sizes(split, numel, indices.size(), out_features.size(), out_labels.size());
  if (augmentation.random_crop && augmentation.crop_padding < 0) {
    throw std::invalid_argument("gather_batch: crop_padding " +
                                std::to_string(augmentation.crop_padding) + " must be >= 0");
  }
  if (!augmentation.fill.empty() &&
      augmentation.fill.size() != static_cast<std::size_t>(shape.channels)) {
    throw std::invalid_argument("gather_batch: " + std::to_string(augmentation.fill.size()) +
                                " fill values for " + std::to_string(shape.channels) + " channels");
  }
  const bool augment = augmentation.random_crop || augmentation.horizontal_flip;

  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::size_t index = indices[i];
    if (index >= split.size()) {
      throw std::out_of_range("gather_batch: index " + std::to_string(index) +
                              " out of range for split of " + std::to_string(split.size()));
    }
    const float* sample = split.features.data() + index * numel;
    float* out = out_features.data() + i * numel;
    if (augment) {
      transform_sample(sample, out, shape, draw_transform(augmentation, rng_state),
                       augmentation.fill);
    } else {
      std::copy_n(sample, numel, out);
    }
    out_labels[i] = split.labels[index];
  }
}

}  // namespace commsgd::data
