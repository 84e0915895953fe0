// torchvision's ImageNet transforms on a decoded image (RandomResizedCrop and flip for training,
// Resize and CenterCrop for validation, then normalisation), and OpenCV's bicubic squash.
#pragma once

#include <random>
#include <span>

#include "trainer/data/image_decode.hpp"

namespace commsgd::data {

// The part of the (full-size) image that becomes the output, in pixels.
struct CropBox {
  double left = 0, top = 0, width = 0, height = 0;
  bool flip = false;
  // Train cuts the crop out before resizing, so bilinear samples past its edge
  // repeat the edge pixels; validation resizes the whole image before cropping,
  // so they read the pixels beyond.
  bool cut_out = false;
};

// Which torchvision's RandomResizedCrop.get_params to draw as. Since 0.3 it draws the aspect
// ratio log-uniformly and, when ten draws do not fit, falls back to the largest central crop
// whose ratio is within bounds. 0.2 (PyTorch 0.4's, which the gTop-k, Gaussian-k and SGP codes
// ran) draws the ratio uniformly, swaps width and height with probability 1/2, and falls back to
// the central square of the shorter side.
enum class ResizedCrop { torchvision, torchvision_0_2 };

// torchvision.transforms.RandomResizedCrop.get_params with scale (0.08, 1) and
// ratio (3/4, 4/3), then RandomHorizontalFlip(0.5), for a width x height image.
// Uses only the engine's raw output, never std:: distributions.
CropBox random_resized_crop(int width, int height, std::mt19937_64& rng,
                            ResizedCrop version = ResizedCrop::torchvision);

// torchvision Resize(round(S / fraction)) then CenterCrop(S), expressed as the
// region of the original image that ends up in the crop, so that the image is
// resampled once instead of twice.
CropBox center_crop(int width, int height, int output_size, double fraction);

// Writes the normalized C,H,W resampling of `box` (in `image`'s pixels) to `out`
// (3 * output_size * output_size floats): bilinear, scaled to [0, 1] and
// normalized with the ImageNet mean and std.
void resample(const Image& image, const CropBox& box, int output_size, std::span<float> out);

// `image` resized to size x size whatever its aspect ratio: bicubic with a = -0.75, half-pixel
// centres and the edge pixels repeated, rounded to 8 bits, as OpenCV's resize with INTER_CUBIC
// (which, like this, does not low-pass a downscale).
Image squash(const Image& image, int size);

}  // namespace commsgd::data
