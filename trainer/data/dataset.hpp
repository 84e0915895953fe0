// Data sets for the trainer: plain float feature matrices plus int32 labels,
// loaded from CIFAR-10 / MNIST / CSV files or generated synthetically; for
// ImageNet, the index of a JPEG folder whose images are decoded per batch; for
// a language model, the token ids of a text.
// Deliberately independent of LibTorch so loaders can be tested in isolation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/extension_table.hpp"
#include "algorithms/own_options.hpp"
#include "trainer/data/text_corpus.hpp"

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

struct ImageFile {
  std::filesystem::path path;
  std::int32_t label = 0;
};

struct ImageFolder {
  std::vector<std::string> classes;  // label i is classes[i]
  std::vector<ImageFile> files;      // by label, then by file name

  std::size_t size() const { return files.size(); }
};

struct Dataset {
  std::string name;  // the loader kind, e.g. "cifar10"
  SampleShape shape;
  int num_classes = 0;
  Split train;  // in memory; empty for an image folder
  Split validation;
  // image-folder only: the JPEG files, decoded into `shape` as batches are read.
  std::optional<ImageFolder> train_images, validation_images;
  // ptb only: token streams for a language model; num_classes is the vocabulary's size.
  std::optional<TextCorpus> text;
  // cifar10 only: a black pixel of each channel as stored (after normalization), the border
  // torchvision's RandomCrop pads with before it normalizes (Augmentation::fill). Empty for the
  // other data sets.
  std::vector<float> black;

  // Samples, or tokens of a text.
  std::size_t train_size() const {
    return train_images ? train_images->size() : text ? text->train.size() : train.size();
  }
  std::size_t validation_size() const {
    return validation_images ? validation_images->size()
           : text            ? text->validation.size()
                             : validation.size();
  }
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
  std::string kind;  // a row of dataset_table()
  // cifar10/mnist: directory; csv: file (.csv or .csv.gz); image-folder: the
  // directory holding train/ and val/, each with one subdirectory per class;
  // ptb: the directory holding ptb.train.txt and ptb.valid.txt.
  std::string path;
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
  bool normalize = true;   // ignored by synthetic and image-folder
  int image_size = 224;    // image-folder only: samples are 3 x image_size x image_size
};

// One row per --dataset value: its name, one line for --help, its loader, and what the option
// checks read: whether it is read from --data-path, whether --augment auto augments it (natural
// images), whether it is text (for a language model), and the options that only it takes.
struct DatasetRow {
  std::string_view name;
  std::string_view summary;
  Dataset (*make)(const DatasetOptions& options);
  bool from_path = true;
  bool augmented_by_default = false;
  bool text = false;
  algorithms::OwnOptions own_options = {};  // {"--csv-shape"}
};
const algorithms::ExtensionTable<DatasetRow>& dataset_table();

// The data set of options.kind; throws algorithms::UnknownName for a kind not in the table, and
// DataError for a problem with its files.
Dataset load_dataset(const DatasetOptions& options);

}  // namespace commsgd::data
