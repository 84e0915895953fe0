// In-memory data sets for the trainer: plain float feature matrices plus int32
// labels, loaded from CIFAR-10 / MNIST / CSV files or generated synthetically.
// Deliberately independent of LibTorch so loaders can be tested in isolation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace commsgd::data {

struct SampleShape {
  int channels = 1, height = 1, width = 1;

  std::size_t numel() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) *
           static_cast<std::size_t>(width);
  }
  bool operator==(const SampleShape&) const = default;
};

struct Split {
  std::vector<float> features;  // size() * shape.numel(), row-major C,H,W per sample
  std::vector<std::int32_t> labels;

  std::size_t size() const { return labels.size(); }
};

struct Dataset {
  std::string name;  // the loader kind, e.g. "cifar10"
  SampleShape shape;
  int num_classes = 0;
  Split train;
  Split validation;
};

// Thrown for every data problem (missing file, corrupt/truncated file, bad
// label, bad shape, bad option). what() is one line naming the loader, the file
// (or option) and the problem.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ValSplit { interleaved, tail };

struct DatasetOptions {
  std::string kind;  // "cifar10" | "mnist" | "csv" | "synthetic"
  std::string path;  // cifar10/mnist: directory; csv: file (.csv or .csv.gz)
  // csv only: its product must equal the number of feature columns.
  std::optional<SampleShape> csv_shape;
  // csv only: floor(rows * val_fraction) rows form the validation split, chosen by
  // val_split (see csv.cpp). val_fraction must be in [0, 1).
  double val_fraction = 0.2;
  ValSplit val_split = ValSplit::interleaved;
  SampleShape synthetic_shape{1, 8, 8};
  int synthetic_classes = 10;
  std::size_t synthetic_train = 2048, synthetic_val = 512;
  std::uint64_t seed = 1;  // synthetic content depends only on seed and synthetic_*
  bool normalize = true;   // ignored by synthetic
};

Dataset load_dataset(const DatasetOptions& options);

}  // namespace commsgd::data
