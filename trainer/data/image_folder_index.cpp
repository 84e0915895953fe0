#include "trainer/data/image_folder_index.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace commsgd::data {

namespace {

namespace fs = std::filesystem;

// The extensions torchvision's ImageFolder takes that a decoder here reads. Which decoder reads a
// file is chosen by its content (image_decode.hpp), not by this.
bool has_image_suffix(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".jpg" || extension == ".jpeg" || extension == ".png";
}

// Entries of `dir` that satisfy `keep`, sorted by name. Filesystem errors
// (permissions, a directory vanishing) become DataError naming the directory.
template <typename Keep>
std::vector<fs::path> sorted_entries(const fs::path& dir, Keep keep) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (keep(*it)) entries.push_back(it->path());
  }
  if (error) throw folder_error(dir, "cannot list: " + error.message());
  std::sort(entries.begin(), entries.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return entries;
}

}  // namespace

DataError folder_error(const fs::path& path, std::string_view problem) {
  return DataError("image-folder: " + path.string() + ": " + std::string(problem));
}

ImageFolder index_image_folder(const fs::path& root) {
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    throw folder_error(root, fs::exists(root, error) ? "not a directory" : "no such directory");
  }
  ImageFolder folder;
  // An entry that cannot be examined (e.g. a dangling link) is not a class or an image.
  const auto is_directory = [](const fs::directory_entry& e) {
    std::error_code ignored;
    return e.is_directory(ignored);
  };
  const auto is_image = [](const fs::directory_entry& e) {
    std::error_code ignored;
    return e.is_regular_file(ignored) && has_image_suffix(e.path());
  };
  for (const fs::path& class_dir : sorted_entries(root, is_directory)) {
    const std::vector<fs::path> images = sorted_entries(class_dir, is_image);
    if (images.empty()) {
      throw folder_error(class_dir, "no .jpg, .jpeg or .png files in class directory");
    }
    const auto label = static_cast<std::int32_t>(folder.classes.size());
    folder.classes.push_back(class_dir.filename().string());
    for (const fs::path& image : images) folder.files.push_back({image, label});
  }
  if (folder.classes.empty()) throw folder_error(root, "no class subdirectories");
  return folder;
}

}  // namespace commsgd::data
