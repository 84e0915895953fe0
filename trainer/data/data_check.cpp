#include "trainer/data/data_check.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "trainer/data/image_decode.hpp"

namespace commsgd::data {

namespace {

struct CheckedFile {
  const ImageFile* file;
  std::size_t class_index;  // into DataCheckReport::classes
};

// What a run's loader would meet in the file: the whole entropy-coded or compressed stream is
// read at any scale, so decoding a JPEG at 1/8 finds a truncated or corrupt one as surely as at
// full size, while skipping most of libjpeg's inverse DCT.
std::optional<std::string> problem_of(const ImageFile& file) {
  try {
    open_image(file.path)->decode(8);
    return std::nullopt;
  } catch (const DataError& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return "image-folder: " + file.path.string() + ": too large to decode in memory";
  }
}

// Decodes every file on `threads` threads, reporting progress from the calling thread twice a
// second and at the end.
std::vector<std::optional<std::string>> decode_all(const std::vector<CheckedFile>& files,
                                                   std::size_t threads,
                                                   const CheckProgress& progress) {
  std::vector<std::optional<std::string>> problems(files.size());
  std::atomic<std::size_t> next{0}, bad{0};
  std::size_t done = 0;
  std::mutex mutex;
  std::condition_variable changed;
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) {
      problems[i] = problem_of(*files[i].file);
      if (problems[i]) bad.fetch_add(1);
      const std::lock_guard lock(mutex);
      if (++done == files.size()) changed.notify_one();
    }
  };
  std::vector<std::jthread> workers;
  for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  std::unique_lock lock(mutex);
  while (done < files.size()) {
    changed.wait_for(lock, std::chrono::milliseconds(500));
    const std::size_t now = done;
    lock.unlock();
    progress(now, files.size(), bad.load());
    lock.lock();
  }
  return problems;
}

DataCheckReport check_image_folder(const Dataset& dataset, std::size_t threads,
                                   const CheckProgress& progress) {
  DataCheckReport report;
  std::vector<CheckedFile> files;
  for (const auto& [split, folder] : {std::pair{"train", &*dataset.train_images},
                                      std::pair{"val", &*dataset.validation_images}}) {
    const std::size_t first_class = report.classes.size();
    for (const std::string& name : folder->classes) report.classes.push_back({split, name});
    for (const ImageFile& file : folder->files) {
      const std::size_t class_index = first_class + static_cast<std::size_t>(file.label);
      ++report.classes[class_index].files;
      files.push_back({&file, class_index});
    }
  }
  const std::vector<std::optional<std::string>> problems = decode_all(files, threads, progress);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!problems[i]) continue;
    report.bad.push_back({*problems[i]});
    ++report.classes[files[i].class_index].bad;
  }
  report.images = files.size();
  return report;
}

}  // namespace

DataCheckReport check_data(const DatasetOptions& options, std::size_t threads,
                           const CheckProgress& progress) {
  if (threads < 1) throw std::invalid_argument("check_data: threads must be >= 1");
  DataCheckReport report;
  Dataset dataset;
  try {
    dataset = load_dataset(options);
  } catch (const DataError& e) {
    report.bad.push_back({e.what()});
    return report;
  }
  if (dataset.train_images) report = check_image_folder(dataset, threads, progress);
  report.train_samples = dataset.train_size();
  report.validation_samples = dataset.validation_size();
  return report;
}

}  // namespace commsgd::data
