// Copies a mini-batch out of a Split into caller-owned buffers (e.g. the
// storage of a pinned tensor), optionally with CIFAR-style augmentation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trainer/data/dataset.hpp"

namespace commsgd::data {

struct Augmentation {
  // Shift by up to crop_padding pixels, filling the uncovered border with
  // fill[c] in channel c, or with 0 (the mean colour of normalized data) when
  // fill is empty. torchvision pads before it normalizes, so its border is
  // black: Dataset::black gives that value in the stored units.
  bool random_crop = false;
  int crop_padding = 4;
  bool horizontal_flip = false;  // mirror left-right with probability 1/2
  std::vector<float> fill = {};  // empty, or one value per channel
};

// Copies the samples named by `indices` into out_features (indices.size() *
// shape.numel()) and out_labels (indices.size()). With augmentation, each
// sample independently gets a random crop of its padded image (same
// offset for all channels) and then possibly a horizontal flip, drawn from
// `rng_state`, which is advanced so consecutive batches differ.
// Throws std::invalid_argument on mismatched buffer sizes, a negative
// crop_padding or a fill that is neither empty nor one value per channel, std::out_of_range on an
// index >= split.size().
void gather_batch(const Split& split, const SampleShape& shape,
                  std::span<const std::uint32_t> indices, std::span<float> out_features,
                  std::span<std::int64_t> out_labels, const Augmentation& augmentation,
                  std::uint64_t& rng_state);

}  // namespace commsgd::data
