// The index of an ImageNet-style folder (root/<class>/<image>.JPEG): its classes, its files and
// their labels, found from names alone, without opening an image.
#pragma once

#include <filesystem>
#include <string_view>

#include "trainer/data/dataset.hpp"

namespace commsgd::data {

// Classes are the subdirectories of root in lexicographic (byte) order, as in
// torchvision's ImageFolder; their files ending in .jpg, .jpeg or .png (any case)
// are the samples, sorted by name so the index is the same on every rank.
// Other files are ignored. Throws DataError ("image-folder: <path>: <problem>")
// if root is not a directory, has no subdirectories, or a subdirectory holds
// no such file.
ImageFolder index_image_folder(const std::filesystem::path& root);

// DataError("image-folder: <path>: <problem>"). Indexing, decoding and the data set's own checks
// all report a bad file or directory this way, so that every message names the loader and the
// path whatever found the problem.
DataError folder_error(const std::filesystem::path& path, std::string_view problem);

}  // namespace commsgd::data
