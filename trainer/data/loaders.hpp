// Internal to trainer/data: one loader per data-set kind, dispatched by
// load_dataset(), plus the file reading they share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "trainer/data/dataset.hpp"

namespace commsgd::data {

Dataset load_cifar10(const DatasetOptions& options);
Dataset load_mnist(const DatasetOptions& options);
Dataset load_csv(const DatasetOptions& options);
Dataset load_synthetic(const DatasetOptions& options);
Dataset load_image_folder(const DatasetOptions& options);

// Whole file contents; gzip-compressed files are decompressed transparently.
// Failures throw DataError prefixed with "<loader>: <file>: ".
std::vector<std::uint8_t> read_file_bytes(std::string_view loader,
                                          const std::filesystem::path& file);

// Throws DataError if the shape has a non-positive dimension.
void require_positive_shape(std::string_view loader, std::string_view option,
                            const SampleShape& shape);

}  // namespace commsgd::data
