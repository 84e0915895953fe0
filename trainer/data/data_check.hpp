// A data set read whole before a job trains on it (commsgd-train --check-data): every file of an
// image folder opened and decoded, the in-memory data sets (CIFAR-10, MNIST, CSV, PTB) loaded as a
// run loads them, so that a truncated or unreadable file is found in minutes rather than when a
// batch reaches it hours into a job.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "trainer/data/dataset.hpp"

namespace commsgd::data {

struct BadFile {
  std::string reason;  // the DataError's one line, naming the loader and the file
};

// An image folder's class with its count of files and of bad ones.
struct ClassCheck {
  std::string split;  // "train" or "val"
  std::string name;
  std::size_t files = 0, bad = 0;
};

struct DataCheckReport {
  std::size_t images = 0;                                 // image folders: the images decoded
  std::size_t train_samples = 0, validation_samples = 0;  // samples, or tokens of a text
  std::vector<BadFile> bad;         // image folders: in the index's order, train then val
  std::vector<ClassCheck> classes;  // image folders only, train's then val's
};

// Called now and then from the calling thread while images are decoded, and once at the end.
using CheckProgress = std::function<void(std::size_t done, std::size_t total, std::size_t bad)>;

// Reads the data set of `options`. An image folder is indexed, then its images are decoded on
// `threads` threads (>= 1), every one however many are bad. An in-memory data set is loaded as a
// run loads it, which stops at its first problem; so does an image folder's index (no such
// directory, a class without images, splits whose classes differ). That problem is then the one
// bad entry.
DataCheckReport check_data(const DatasetOptions& options, std::size_t threads,
                           const CheckProgress& progress);

}  // namespace commsgd::data
