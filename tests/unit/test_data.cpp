#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "trainer/data/batch.hpp"
#include "trainer/data/dataset.hpp"

namespace commsgd::data {
namespace {

namespace fs = std::filesystem;

using commsgd::testing::TempDir;

using Bytes = std::vector<std::uint8_t>;

void write_file(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  ASSERT_TRUE(out.good()) << path;
}

void write_file(const fs::path& path, const Bytes& bytes) {
  write_file(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void write_gz(const fs::path& path, std::string_view contents) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << path;
  EXPECT_EQ(gzwrite(gz, contents.data(), static_cast<unsigned>(contents.size())),
            static_cast<int>(contents.size()));
  EXPECT_EQ(gzclose(gz), Z_OK);
}

void write_gz(const fs::path& path, const Bytes& bytes) {
  write_gz(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Success iff loading throws a DataError whose message is one line containing
// every needle.
::testing::AssertionResult FailsMentioning(const DatasetOptions& options,
                                           std::initializer_list<std::string_view> needles) {
  try {
    load_dataset(options);
  } catch (const DataError& error) {
    const std::string message = error.what();
    if (message.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "multi-line message: " << message;
    }
    for (std::string_view needle : needles) {
      if (message.find(needle) == std::string::npos) {
        return ::testing::AssertionFailure() << "'" << message << "' lacks '" << needle << "'";
      }
    }
    return ::testing::AssertionSuccess() << message;
  }
  return ::testing::AssertionFailure() << "no DataError thrown";
}

// ----------------------------------------------------------------- CIFAR-10

constexpr std::size_t kCifarImage = 3 * 32 * 32;

// Deterministic but position-dependent pixels so misplaced bytes are caught.
std::uint8_t cifar_pixel(int file, int record, std::size_t i) {
  return static_cast<std::uint8_t>((static_cast<std::size_t>(file) * 31 + record * 7 + i) % 256);
}

int cifar_label(int file, int record) {
  return (file * 2 + record) % 10;
}

Bytes cifar_batch(int file, int records = 2) {
  Bytes bytes;
  for (int r = 0; r < records; ++r) {
    bytes.push_back(static_cast<std::uint8_t>(cifar_label(file, r)));
    for (std::size_t i = 0; i < kCifarImage; ++i) bytes.push_back(cifar_pixel(file, r, i));
  }
  return bytes;
}

std::string cifar_file_name(int file) {
  return file == 6 ? "test_batch.bin" : "data_batch_" + std::to_string(file) + ".bin";
}

class CifarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int file = 1; file <= 6; ++file) {
      write_file(dir_ / cifar_file_name(file), cifar_batch(file));
    }
    options_.kind = "cifar10";
    options_.path = dir_.path().string();
  }

  TempDir dir_;
  DatasetOptions options_;
};

TEST_F(CifarTest, LoadsRawPixelsInFileOrder) {
  options_.normalize = false;
  const Dataset d = load_dataset(options_);
  EXPECT_EQ(d.name, "cifar10");
  EXPECT_EQ(d.shape, (SampleShape{3, 32, 32}));
  EXPECT_EQ(d.num_classes, 10);
  ASSERT_EQ(d.train.size(), 10U);
  ASSERT_EQ(d.validation.size(), 2U);
  ASSERT_EQ(d.train.features.size(), 10 * kCifarImage);
  ASSERT_EQ(d.validation.features.size(), 2 * kCifarImage);
  for (int file = 1; file <= 5; ++file) {
    for (int r = 0; r < 2; ++r) {
      const std::size_t sample = static_cast<std::size_t>((file - 1) * 2 + r);
      EXPECT_EQ(d.train.labels[sample], cifar_label(file, r));
      for (std::size_t i : {std::size_t{0}, std::size_t{1500}, kCifarImage - 1}) {
        EXPECT_FLOAT_EQ(d.train.features[sample * kCifarImage + i],
                        cifar_pixel(file, r, i) / 255.0F);
      }
    }
  }
  EXPECT_EQ(d.validation.labels[1], cifar_label(6, 1));
  EXPECT_FLOAT_EQ(d.validation.features[kCifarImage + 7], cifar_pixel(6, 1, 7) / 255.0F);
}

TEST_F(CifarTest, NormalizesPerChannel) {
  const Dataset d = load_dataset(options_);
  const float mean[3] = {0.4914F, 0.4822F, 0.4465F};
  const float stddev[3] = {0.2470F, 0.2435F, 0.2616F};
  for (std::size_t channel = 0; channel < 3; ++channel) {
    const std::size_t i = channel * 1024 + 100;
    const float expected = (cifar_pixel(1, 0, i) / 255.0F - mean[channel]) / stddev[channel];
    EXPECT_NEAR(d.train.features[i], expected, 1e-5F) << "channel " << channel;
  }
}

// gtopkssgd and GaussianK-SGD crop before they normalize (RandomCrop(32, padding=4), flip,
// ToTensor, Normalize), so their border is a black pixel in normalized units. Training image 0
// through that pipeline, computed by hand from its bytes, must be one of the crops that
// --crop-fill black gives.
TEST_F(CifarTest, BlackFillPadsAsTorchvisionDoesBeforeNormalizing) {
  const Dataset d = load_dataset(options_);
  const float mean[3] = {0.4914F, 0.4822F, 0.4465F};
  const float stddev[3] = {0.2470F, 0.2435F, 0.2616F};
  ASSERT_EQ(d.black.size(), 3U);
  for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(d.black[c], (0.0F - mean[c]) / stddev[c]);
  EXPECT_NEAR(d.black[0], -1.9895F, 1e-4F);
  EXPECT_NEAR(d.black[2], -1.7068F, 1e-4F);

  const auto torchvision = [&](int dy, int dx, bool flip) {
    std::vector<float> out;
    for (std::size_t c = 0; c < 3; ++c) {
      for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x) {
          const int sy = y + dy;
          const int sx = (flip ? 31 - x : x) + dx;
          const bool inside = sy >= 0 && sy < 32 && sx >= 0 && sx < 32;
          const std::uint8_t byte =
              inside ? cifar_pixel(1, 0, c * 1024 + static_cast<std::size_t>(sy * 32 + sx)) : 0;
          out.push_back((static_cast<float>(byte) / 255.0F - mean[c]) / stddev[c]);
        }
      }
    }
    return out;
  };
  const Augmentation black{
      .random_crop = true, .crop_padding = 4, .horizontal_flip = true, .fill = d.black};
  std::uint64_t state = 7;
  const std::vector<std::uint32_t> first{0};
  int padded = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<float> out(kCifarImage);
    std::vector<std::int64_t> label(1);
    gather_batch(d.train, d.shape, first, out, label, black, state);
    bool matched = false;
    for (int dy = -4; dy <= 4 && !matched; ++dy) {
      for (int dx = -4; dx <= 4 && !matched; ++dx) {
        for (bool flip : {false, true}) {
          if (out == torchvision(dy, dx, flip)) {
            matched = true;
            padded += dy != 0 || dx != 0;
            break;
          }
        }
      }
    }
    EXPECT_TRUE(matched) << "trial " << trial;
  }
  EXPECT_GT(padded, 30) << "most of 81 offsets leave a border";
}

TEST_F(CifarTest, TruncatedBatchNamesFileAndSize) {
  Bytes bytes = cifar_batch(3);
  bytes.resize(1000);
  write_file(dir_ / "data_batch_3.bin", bytes);
  EXPECT_TRUE(FailsMentioning(options_, {"data_batch_3.bin", "1000", "3073"}));
}

TEST_F(CifarTest, EmptyBatchIsRejected) {
  write_file(dir_ / "data_batch_2.bin", Bytes{});
  EXPECT_TRUE(FailsMentioning(options_, {"data_batch_2.bin", "empty"}));
}

TEST_F(CifarTest, LabelAboveNineIsRejected) {
  Bytes bytes = cifar_batch(6);
  bytes[3073] = 10;  // label of the second record
  write_file(dir_ / "test_batch.bin", bytes);
  EXPECT_TRUE(FailsMentioning(options_, {"test_batch.bin", "label 10"}));
}

TEST_F(CifarTest, MissingBatchIsRejected) {
  fs::remove(dir_ / "data_batch_5.bin");
  EXPECT_TRUE(FailsMentioning(options_, {"data_batch_5.bin"}));
}

// -------------------------------------------------------------------- MNIST

void put_be32(Bytes& bytes, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    bytes.push_back(static_cast<std::uint8_t>(value >> shift));
  }
}

Bytes idx_file(std::uint32_t magic, const std::vector<std::uint32_t>& dims, const Bytes& items) {
  Bytes bytes;
  put_be32(bytes, magic);
  for (std::uint32_t dim : dims) put_be32(bytes, dim);
  bytes.insert(bytes.end(), items.begin(), items.end());
  return bytes;
}

std::uint8_t mnist_pixel(std::size_t image, std::size_t i) {
  return static_cast<std::uint8_t>((image * 13 + i * 3) % 256);
}

Bytes mnist_images(std::uint32_t count, std::uint32_t side = 28) {
  Bytes pixels;
  for (std::size_t image = 0; image < count; ++image) {
    for (std::size_t i = 0; i < std::size_t{side} * side; ++i) {
      pixels.push_back(mnist_pixel(image, i));
    }
  }
  return idx_file(0x803, {count, side, side}, pixels);
}

Bytes mnist_labels(const Bytes& labels) {
  return idx_file(0x801, {static_cast<std::uint32_t>(labels.size())}, labels);
}

struct MnistFiles {
  Bytes train_images = mnist_images(3);
  Bytes train_labels = mnist_labels({7, 0, 9});
  Bytes test_images = mnist_images(2);
  Bytes test_labels = mnist_labels({1, 2});

  void write(const TempDir& dir, bool gzipped) const {
    const std::string suffix = gzipped ? ".gz" : "";
    const auto put = gzipped ? [](const fs::path& p, const Bytes& b) { write_gz(p, b); }
                             : [](const fs::path& p, const Bytes& b) { write_file(p, b); };
    put(dir / ("train-images-idx3-ubyte" + suffix), train_images);
    put(dir / ("train-labels-idx1-ubyte" + suffix), train_labels);
    put(dir / ("t10k-images-idx3-ubyte" + suffix), test_images);
    put(dir / ("t10k-labels-idx1-ubyte" + suffix), test_labels);
  }
};

class MnistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.kind = "mnist";
    options_.path = dir_.path().string();
  }

  TempDir dir_;
  DatasetOptions options_;
  MnistFiles files_;
};

TEST_F(MnistTest, LoadsPlainFiles) {
  files_.write(dir_, false);
  options_.normalize = false;
  const Dataset d = load_dataset(options_);
  EXPECT_EQ(d.name, "mnist");
  EXPECT_EQ(d.shape, (SampleShape{1, 28, 28}));
  EXPECT_EQ(d.num_classes, 10);
  EXPECT_EQ(d.train.labels, (std::vector<std::int32_t>{7, 0, 9}));
  EXPECT_EQ(d.validation.labels, (std::vector<std::int32_t>{1, 2}));
  ASSERT_EQ(d.train.features.size(), 3U * 784);
  ASSERT_EQ(d.validation.features.size(), 2U * 784);
  EXPECT_FLOAT_EQ(d.train.features[2 * 784 + 500], mnist_pixel(2, 500) / 255.0F);
  EXPECT_FLOAT_EQ(d.validation.features[783], mnist_pixel(0, 783) / 255.0F);
}

TEST_F(MnistTest, Normalizes) {
  files_.write(dir_, false);
  const Dataset d = load_dataset(options_);
  EXPECT_NEAR(d.train.features[1 * 784 + 10], (mnist_pixel(1, 10) / 255.0F - 0.1307F) / 0.3081F,
              1e-5F);
}

TEST_F(MnistTest, GzippedFilesMatchPlainOnes) {
  files_.write(dir_, false);
  const Dataset plain = load_dataset(options_);
  TempDir gz_dir;
  files_.write(gz_dir, true);
  options_.path = gz_dir.path().string();
  const Dataset gzipped = load_dataset(options_);
  EXPECT_EQ(gzipped.train.features, plain.train.features);
  EXPECT_EQ(gzipped.train.labels, plain.train.labels);
  EXPECT_EQ(gzipped.validation.features, plain.validation.features);
  EXPECT_EQ(gzipped.validation.labels, plain.validation.labels);
}

TEST_F(MnistTest, BadMagicIsRejected) {
  files_.train_images[3] = 0x04;
  files_.write(dir_, false);
  EXPECT_TRUE(FailsMentioning(options_, {"train-images-idx3-ubyte", "magic"}));
}

TEST_F(MnistTest, ImageLabelCountMismatchIsRejected) {
  files_.train_labels = mnist_labels({7, 0});
  files_.write(dir_, false);
  EXPECT_TRUE(FailsMentioning(options_, {"train-labels-idx1-ubyte", "train-images-idx3-ubyte"}));
}

TEST_F(MnistTest, TruncatedImagesAreRejected) {
  files_.test_images.pop_back();
  files_.write(dir_, false);
  EXPECT_TRUE(FailsMentioning(options_, {"t10k-images-idx3-ubyte", "size"}));
}

TEST_F(MnistTest, WrongImageSizeIsRejected) {
  files_.test_images = mnist_images(2, 27);
  files_.write(dir_, false);
  EXPECT_TRUE(FailsMentioning(options_, {"t10k-images-idx3-ubyte", "27"}));
}

TEST_F(MnistTest, LabelAboveNineIsRejected) {
  files_.test_labels = mnist_labels({1, 12});
  files_.write(dir_, false);
  EXPECT_TRUE(FailsMentioning(options_, {"t10k-labels-idx1-ubyte", "label 12"}));
}

TEST_F(MnistTest, MissingFileIsRejected) {
  files_.write(dir_, false);
  fs::remove(dir_ / "t10k-labels-idx1-ubyte");
  EXPECT_TRUE(FailsMentioning(options_, {"t10k-labels-idx1-ubyte"}));
}

TEST_F(MnistTest, TruncatedGzipStreamIsRejected) {
  files_.write(dir_, true);
  const fs::path images = dir_ / "train-images-idx3-ubyte.gz";
  fs::resize_file(images, fs::file_size(images) / 2);
  EXPECT_TRUE(FailsMentioning(options_, {"train-images-idx3-ubyte.gz"}));
}

// ---------------------------------------------------------------------- CSV

constexpr std::string_view kSmallCsv =
    "1,2,3,0\n"
    "4,5,6,1\n"
    "7,8,9,2\n"
    "10,11,12,1\n"
    "13,14,15,0\n";

class CsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.kind = "csv";
    options_.normalize = false;
    options_.val_fraction = 0.4;
    options_.val_split = ValSplit::tail;  // the expectations below name the last rows
  }

  Dataset load(const std::string& name, std::string_view contents) {
    write_file(dir_ / name, contents);
    options_.path = (dir_ / name).string();
    return load_dataset(options_);
  }

  ::testing::AssertionResult fails(const std::string& name, std::string_view contents,
                                   std::initializer_list<std::string_view> needles) {
    write_file(dir_ / name, contents);
    options_.path = (dir_ / name).string();
    return FailsMentioning(options_, needles);
  }

  TempDir dir_;
  DatasetOptions options_;
};

void expect_small_csv(const Dataset& d) {
  EXPECT_EQ(d.name, "csv");
  EXPECT_EQ(d.shape, (SampleShape{1, 1, 3}));
  EXPECT_EQ(d.num_classes, 3);
  EXPECT_EQ(d.train.features, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(d.train.labels, (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(d.validation.features, (std::vector<float>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(d.validation.labels, (std::vector<std::int32_t>{1, 0}));
}

TEST_F(CsvTest, LoadsPlainFileWithLastRowsAsValidation) {
  expect_small_csv(load("small.csv", kSmallCsv));
}

TEST_F(CsvTest, LoadsGzippedFile) {
  write_gz(dir_ / "small.csv.gz", kSmallCsv);
  options_.path = (dir_ / "small.csv.gz").string();
  expect_small_csv(load_dataset(options_));
}

TEST_F(CsvTest, SkipsHeaderLine) {
  expect_small_csv(load("header.csv", "a,b,c,label\n" + std::string(kSmallCsv)));
}

TEST_F(CsvTest, ToleratesCrlfBlankLinesAndSpaces) {
  expect_small_csv(
      load("messy.csv", "1, 2 ,3,0\r\n\r\n4,5,6,1\r\n7,8,9,2\n  \n10,11,12,1\n13,14,15,0"));
}

TEST_F(CsvTest, InterleavedSplitSpreadsValidationRowsThroughTheFile) {
  options_.val_split = ValSplit::interleaved;
  const Dataset d = load("small.csv", kSmallCsv);  // 5 rows, 2 held out: rows 2 and 4
  EXPECT_EQ(d.train.labels, (std::vector<std::int32_t>{0, 1, 1}));
  EXPECT_EQ(d.train.features, (std::vector<float>{1, 2, 3, 4, 5, 6, 10, 11, 12}));
  EXPECT_EQ(d.validation.labels, (std::vector<std::int32_t>{2, 0}));
  EXPECT_EQ(d.validation.features, (std::vector<float>{7, 8, 9, 13, 14, 15}));
}

TEST_F(CsvTest, ValidationRowsAreFloorOfFraction) {
  options_.val_fraction = 0.5;  // 2.5 rows -> 2
  EXPECT_EQ(load("small.csv", kSmallCsv).validation.size(), 2U);
  options_.val_fraction = 0.0;
  EXPECT_EQ(load("small.csv", kSmallCsv).train.size(), 5U);

  std::string hundred_rows;
  for (int i = 0; i < 100; ++i) hundred_rows += std::to_string(i) + ",0\n";
  options_.val_fraction = 0.29;  // 100 * 0.29 is 28.999... in binary
  EXPECT_EQ(load("hundred.csv", hundred_rows).validation.size(), 29U);
}

TEST_F(CsvTest, UsesCsvShape) {
  options_.csv_shape = SampleShape{1, 2, 2};
  options_.val_fraction = 0.5;
  const Dataset d = load("square.csv", "1,2,3,4,0\n5,6,7,8,1\n");
  EXPECT_EQ(d.shape, (SampleShape{1, 2, 2}));
  EXPECT_EQ(d.train.features, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.validation.features, (std::vector<float>{5, 6, 7, 8}));
}

TEST_F(CsvTest, StandardizesWithTrainStatisticsOnly) {
  options_.normalize = true;
  options_.val_fraction = 0.25;  // last of 4 rows
  const Dataset d = load("norm.csv", "1,5,0\n4,5,1\n7,5,0\n10,5,1\n");
  // Feature 0 on train: mean 4, population std sqrt(6). Feature 1 is constant,
  // so it is only centred.
  const float s = std::sqrt(6.0F);
  const std::vector<float> train = d.train.features;
  ASSERT_EQ(train.size(), 6U);
  EXPECT_NEAR(train[0], -3 / s, 1e-6F);
  EXPECT_NEAR(train[2], 0.0F, 1e-6F);
  EXPECT_NEAR(train[4], 3 / s, 1e-6F);
  for (std::size_t i : {1, 3, 5}) EXPECT_EQ(train[i], 0.0F);
  ASSERT_EQ(d.validation.features.size(), 2U);
  EXPECT_NEAR(d.validation.features[0], 6 / s, 1e-6F);
  EXPECT_EQ(d.validation.features[1], 0.0F);
}

TEST_F(CsvTest, RaggedRowNamesFileAndLine) {
  EXPECT_TRUE(fails("ragged.csv", "1,2,0\n3,4,1\n5,1\n", {"ragged.csv", "line 3"}));
}

TEST_F(CsvTest, NonNumericFieldNamesFileAndLine) {
  EXPECT_TRUE(fails("text.csv", "1,2,0\nx,4,1\n", {"text.csv", "line 2", "'x'"}));
}

TEST_F(CsvTest, BadLabelsAreRejected) {
  EXPECT_TRUE(fails("negative.csv", "1,2,0\n3,4,-1\n", {"negative.csv", "line 2"}));
  EXPECT_TRUE(fails("fraction.csv", "1,2,0.5\n", {"fraction.csv", "line 1"}));
}

TEST_F(CsvTest, EmptyFilesAreRejected) {
  EXPECT_TRUE(fails("empty.csv", "", {"empty.csv"}));
  EXPECT_TRUE(fails("blank.csv", "\n \n", {"blank.csv"}));
  EXPECT_TRUE(fails("header_only.csv", "a,b,label\n", {"header_only.csv"}));
}

TEST_F(CsvTest, SingleColumnIsRejected) {
  EXPECT_TRUE(fails("labels_only.csv", "1\n2\n", {"labels_only.csv", "line 1"}));
}

TEST_F(CsvTest, MissingFileIsRejected) {
  options_.path = (dir_ / "absent.csv").string();
  EXPECT_TRUE(FailsMentioning(options_, {"absent.csv"}));
}

TEST_F(CsvTest, CsvShapeMismatchIsRejected) {
  options_.csv_shape = SampleShape{1, 3, 3};
  EXPECT_TRUE(fails("small.csv", kSmallCsv, {"small.csv", "csv_shape"}));
  options_.csv_shape = SampleShape{-1, -1, 3};  // right product, nonsense dims
  EXPECT_TRUE(FailsMentioning(options_, {"csv_shape"}));
}

TEST_F(CsvTest, ValFractionOutsideRangeIsRejected) {
  write_file(dir_ / "small.csv", kSmallCsv);
  options_.path = (dir_ / "small.csv").string();
  for (double fraction : {1.0, -0.1, std::nan("")}) {
    options_.val_fraction = fraction;
    EXPECT_TRUE(FailsMentioning(options_, {"val_fraction"})) << fraction;
  }
}

// The build passes the path in; the default is where Debian's python3-sklearn puts it.
#ifdef COMMSGD_DIGITS_CSV
constexpr const char* kDigits = COMMSGD_DIGITS_CSV;
#else
constexpr const char* kDigits =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
#endif

#ifdef COMMSGD_FASHION_MNIST_DIR
constexpr const char* kFashionMnist = COMMSGD_FASHION_MNIST_DIR;
#else
constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";
#endif

// The real files, as Debian ships them (gzipped IDX): 60 000 training and 10 000 test images of
// 28x28, 6 000 and 1 000 of each of the 10 classes.
TEST(FashionMnist, TheRealFilesHoldTheirSixtyThousandAndTenThousandImages) {
  if (!fs::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " not installed";
  DatasetOptions options;
  options.kind = "mnist";
  options.path = kFashionMnist;
  const Dataset d = load_dataset(options);
  EXPECT_EQ(d.shape, (SampleShape{1, 28, 28}));
  EXPECT_EQ(d.num_classes, 10);
  ASSERT_EQ(d.train.size(), 60000U);
  ASSERT_EQ(d.validation.size(), 10000U);
  for (const auto& [split, each] : {std::pair{&d.train, 6000}, std::pair{&d.validation, 1000}}) {
    std::array<int, 10> counts{};
    for (const std::int32_t label : split->labels) ++counts.at(static_cast<std::size_t>(label));
    EXPECT_TRUE(std::ranges::all_of(counts, [&](int n) { return n == each; }));
  }
}

DatasetOptions digits_options() {
  DatasetOptions options;
  options.kind = "csv";
  options.path = kDigits;
  options.csv_shape = SampleShape{1, 8, 8};
  options.normalize = false;
  return options;
}

TEST(CsvDigits, InterleavedSplitHoldsOutEveryFifthRow) {
  if (!fs::exists(kDigits)) GTEST_SKIP() << kDigits << " not installed";
  const Dataset d = load_dataset(digits_options());
  ASSERT_EQ(d.validation.size(), 359U);
  DatasetOptions all_train = digits_options();
  all_train.val_fraction = 0.0;
  const Dataset whole = load_dataset(all_train);
  std::vector<std::int32_t> held_out;
  for (std::size_t i = 0; i < 1797; ++i) {
    if ((i + 1) * 359 / 1797 > i * 359 / 1797) held_out.push_back(whole.train.labels[i]);
  }
  EXPECT_EQ(d.validation.labels, held_out);
  EXPECT_EQ(whole.train.labels[5], d.validation.labels[0]);  // rows 5, 10, 15, ... are held out
}

TEST(CsvDigits, LastFifthIsValidationRoundedDown) {
  if (!fs::exists(kDigits)) GTEST_SKIP() << kDigits << " not installed";
  DatasetOptions tail = digits_options();
  tail.val_split = ValSplit::tail;
  const Dataset d = load_dataset(tail);
  EXPECT_EQ(d.shape, (SampleShape{1, 8, 8}));
  EXPECT_EQ(d.num_classes, 10);
  EXPECT_EQ(d.train.size(), 1438U);  // 1797 - floor(0.2 * 1797)
  EXPECT_EQ(d.validation.size(), 359U);
  EXPECT_EQ(d.train.features.size(), 1438U * 64);
  EXPECT_TRUE(std::ranges::all_of(d.train.features, [](float x) { return x >= 0 && x <= 16; }));

  DatasetOptions all_train = digits_options();
  all_train.val_fraction = 0.0;
  const Dataset whole = load_dataset(all_train);
  ASSERT_EQ(whole.train.size(), 1797U);
  EXPECT_TRUE(std::equal(d.validation.features.begin(), d.validation.features.end(),
                         whole.train.features.end() - 359 * 64));
  EXPECT_TRUE(std::equal(d.train.labels.begin(), d.train.labels.end(), whole.train.labels.begin()));

  // First and last rows of the file.
  EXPECT_EQ(d.train.labels.front(), 0);
  EXPECT_EQ(std::vector<float>(d.train.features.begin(), d.train.features.begin() + 8),
            (std::vector<float>{0, 0, 5, 13, 9, 1, 0, 0}));
  EXPECT_EQ(d.validation.labels.back(), 8);
  EXPECT_EQ(std::vector<float>(d.validation.features.end() - 8, d.validation.features.end()),
            (std::vector<float>{0, 1, 8, 12, 14, 12, 1, 0}));
}

TEST(CsvDigits, NormalizedTrainFeaturesAreStandardized) {
  if (!fs::exists(kDigits)) GTEST_SKIP() << kDigits << " not installed";
  DatasetOptions options = digits_options();
  options.normalize = true;
  const Dataset d = load_dataset(options);
  const std::size_t rows = d.train.size();
  for (std::size_t f : {std::size_t{0}, std::size_t{20}, std::size_t{43}}) {
    double sum = 0, sum_sq = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double x = d.train.features[r * 64 + f];
      sum += x;
      sum_sq += x * x;
    }
    const double mean = sum / static_cast<double>(rows);
    EXPECT_NEAR(mean, 0.0, 1e-4) << "feature " << f;
    const double var = sum_sq / static_cast<double>(rows) - mean * mean;
    // Feature 0 is all zeros in digits: centred but left unscaled.
    EXPECT_NEAR(var, f == 0 ? 0.0 : 1.0, 1e-3) << "feature " << f;
  }
}

// -------------------------------------------------------------------- other

TEST(LoadDataset, UnknownKindIsRejected) {
  DatasetOptions options;
  options.kind = "bogus";
  try {
    load_dataset(options);
    ADD_FAILURE() << "no error";
  } catch (const algorithms::UnknownName& e) {
    EXPECT_NE(std::string(e.what()).find("--dataset: unknown data set 'bogus'"), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------- synthetic

DatasetOptions synthetic_options(std::uint64_t seed = 1) {
  DatasetOptions options;
  options.kind = "synthetic";
  options.seed = seed;
  return options;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Synthetic, HasRequestedShapeAndSizes) {
  const Dataset d = load_dataset(synthetic_options());
  EXPECT_EQ(d.name, "synthetic");
  EXPECT_EQ(d.shape, (SampleShape{1, 8, 8}));
  EXPECT_EQ(d.num_classes, 10);
  ASSERT_EQ(d.train.size(), 2048U);
  ASSERT_EQ(d.validation.size(), 512U);
  EXPECT_EQ(d.train.features.size(), 2048U * 64);
  EXPECT_EQ(d.validation.features.size(), 512U * 64);
  const auto in_range = [](std::int32_t label) { return label >= 0 && label < 10; };
  EXPECT_TRUE(std::ranges::all_of(d.train.labels, in_range));
  EXPECT_TRUE(std::ranges::all_of(d.validation.labels, in_range));
  EXPECT_EQ(std::set<std::int32_t>(d.train.labels.begin(), d.train.labels.end()).size(), 10U);
}

TEST(Synthetic, SameSeedGivesIdenticalBytes) {
  const Dataset a = load_dataset(synthetic_options(42));
  DatasetOptions other = synthetic_options(42);
  other.normalize = false;  // ignored by synthetic
  other.path = "/nonexistent";
  const Dataset b = load_dataset(other);
  EXPECT_TRUE(same_bytes(a.train.features, b.train.features));
  EXPECT_TRUE(same_bytes(a.validation.features, b.validation.features));
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_EQ(a.validation.labels, b.validation.labels);
}

TEST(Synthetic, DifferentSeedGivesDifferentData) {
  const Dataset a = load_dataset(synthetic_options(1));
  const Dataset b = load_dataset(synthetic_options(2));
  EXPECT_FALSE(same_bytes(a.train.features, b.train.features));
  EXPECT_NE(a.train.labels, b.train.labels);
}

TEST(Synthetic, TrainAndValidationAreDifferentDraws) {
  const Dataset d = load_dataset(synthetic_options());
  const std::vector<float> train_head(d.train.features.begin(),
                                      d.train.features.begin() + 512 * 64);
  EXPECT_FALSE(same_bytes(train_head, d.validation.features));
}

TEST(Synthetic, ValidationDoesNotDependOnTrainSize) {
  DatasetOptions small = synthetic_options();
  small.synthetic_train = 10;
  EXPECT_TRUE(same_bytes(load_dataset(small).validation.features,
                         load_dataset(synthetic_options()).validation.features));
}

// Pins the integer RNG stream so that data stays identical across releases
// and platforms.
TEST(Synthetic, LabelStreamIsStable) {
  const Dataset d = load_dataset(synthetic_options(1));
  const std::vector<std::int32_t> head(d.train.labels.begin(), d.train.labels.begin() + 12);
  EXPECT_EQ(head, (std::vector<std::int32_t>{2, 2, 9, 1, 8, 2, 9, 0, 7, 9, 5, 9}));
}

TEST(Synthetic, NearestCentroidClassifierLearnsIt) {
  const Dataset d = load_dataset(synthetic_options(7));
  const std::size_t numel = d.shape.numel();
  const auto classes = static_cast<std::size_t>(d.num_classes);
  std::vector<double> centroids(classes * numel, 0.0);
  std::vector<double> counts(classes, 0.0);
  for (std::size_t i = 0; i < d.train.size(); ++i) {
    const auto c = static_cast<std::size_t>(d.train.labels[i]);
    counts[c] += 1;
    for (std::size_t j = 0; j < numel; ++j) {
      centroids[c * numel + j] += d.train.features[i * numel + j];
    }
  }
  for (std::size_t k = 0; k < centroids.size(); ++k) centroids[k] /= counts[k / numel];

  std::size_t correct = 0;
  for (std::size_t i = 0; i < d.validation.size(); ++i) {
    std::size_t best = 0;
    double best_distance = INFINITY;
    for (std::size_t c = 0; c < classes; ++c) {
      double distance = 0;
      for (std::size_t j = 0; j < numel; ++j) {
        const double diff = d.validation.features[i * numel + j] - centroids[c * numel + j];
        distance += diff * diff;
      }
      if (distance < best_distance) std::tie(best, best_distance) = std::tuple(c, distance);
    }
    correct += best == static_cast<std::size_t>(d.validation.labels[i]) ? 1 : 0;
  }
  EXPECT_GT(static_cast<double>(correct) / static_cast<double>(d.validation.size()), 0.9);
}

TEST(Synthetic, InvalidOptionsAreRejected) {
  DatasetOptions options = synthetic_options();
  options.synthetic_classes = 0;
  EXPECT_TRUE(FailsMentioning(options, {"synthetic_classes"}));
  options = synthetic_options();
  options.synthetic_shape = SampleShape{1, 0, 8};
  EXPECT_TRUE(FailsMentioning(options, {"synthetic_shape"}));
}

// -------------------------------------------------------------------- batch

// Split of `count` samples of `shape` whose values are all distinct and > 0,
// so zero padding is recognizable.
Split numbered_split(const SampleShape& shape, std::size_t count) {
  Split split;
  for (std::size_t i = 0; i < count; ++i) {
    split.labels.push_back(static_cast<std::int32_t>(100 + i));
    for (std::size_t j = 0; j < shape.numel(); ++j) {
      split.features.push_back(static_cast<float>(1 + i * 1000 + j));
    }
  }
  return split;
}

// in shifted by (dy, dx) then mirrored when `flip`, zero outside; the reference
// for what gather_batch's augmentation may produce.
std::vector<float> transformed(const float* in, const SampleShape& s, int dy, int dx, bool flip) {
  std::vector<float> out;
  for (int c = 0; c < s.channels; ++c) {
    for (int y = 0; y < s.height; ++y) {
      for (int x = 0; x < s.width; ++x) {
        const int sy = y + dy;
        const int sx = (flip ? s.width - 1 - x : x) + dx;
        const bool inside = sy >= 0 && sy < s.height && sx >= 0 && sx < s.width;
        out.push_back(inside ? in[(c * s.height + sy) * s.width + sx] : 0.0F);
      }
    }
  }
  return out;
}

TEST(GatherBatch, CopiesSamplesAndLabels) {
  const SampleShape shape{1, 2, 3};
  const Split split = numbered_split(shape, 4);
  const std::vector<std::uint32_t> indices{2, 0, 3};
  std::vector<float> features(3 * 6);
  std::vector<std::int64_t> labels(3);
  std::uint64_t state = 5;
  gather_batch(split, shape, indices, features, labels, Augmentation{}, state);
  EXPECT_EQ(labels, (std::vector<std::int64_t>{102, 100, 103}));
  for (std::size_t b = 0; b < 3; ++b) {
    for (std::size_t j = 0; j < 6; ++j) {
      EXPECT_EQ(features[b * 6 + j], split.features[indices[b] * 6 + j]);
    }
  }
  EXPECT_EQ(state, 5U) << "no augmentation, no randomness consumed";
}

TEST(GatherBatch, FlipMirrorsKnownImage) {
  const SampleShape shape{2, 2, 3};
  Split split;
  split.labels = {4};
  split.features = {1, 2, 3, 4,  5,  6,    // channel 0
                    7, 8, 9, 10, 11, 12};  // channel 1
  const std::vector<float> mirrored{3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10};
  Augmentation flip_only;
  flip_only.horizontal_flip = true;
  std::uint64_t state = 1;
  int flipped = 0;
  int kept = 0;
  const std::vector<std::uint32_t> index{0};
  for (int trial = 0; trial < 64; ++trial) {
    std::vector<float> out(12);
    std::vector<std::int64_t> label(1);
    gather_batch(split, shape, index, out, label, flip_only, state);
    EXPECT_EQ(label[0], 4);
    if (out == mirrored) {
      ++flipped;
    } else {
      EXPECT_EQ(out, split.features);
      ++kept;
    }
  }
  EXPECT_GT(flipped, 10);
  EXPECT_GT(kept, 10);
}

TEST(GatherBatch, RandomCropShiftsWithZeroPaddingAndKeepsShape) {
  const SampleShape shape{3, 5, 4};
  const Split split = numbered_split(shape, 2);
  Augmentation augmentation;
  augmentation.random_crop = true;
  augmentation.crop_padding = 2;
  augmentation.horizontal_flip = true;
  std::uint64_t state = 99;
  std::set<std::tuple<int, int, bool>> seen;
  const std::vector<std::uint32_t> indices{1, 0, 1, 1};
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> out(indices.size() * shape.numel());
    std::vector<std::int64_t> labels(indices.size());
    gather_batch(split, shape, indices, out, labels, augmentation, state);
    for (std::size_t b = 0; b < indices.size(); ++b) {
      const float* in = split.features.data() + indices[b] * shape.numel();
      const std::vector<float> got(
          out.begin() + static_cast<std::ptrdiff_t>(b * shape.numel()),
          out.begin() + static_cast<std::ptrdiff_t>((b + 1) * shape.numel()));
      bool matched = false;
      for (int dy = -2; dy <= 2 && !matched; ++dy) {
        for (int dx = -2; dx <= 2 && !matched; ++dx) {
          for (bool flip : {false, true}) {
            if (got == transformed(in, shape, dy, dx, flip)) {
              seen.emplace(dy, dx, flip);
              matched = true;
              break;
            }
          }
        }
      }
      EXPECT_TRUE(matched) << "trial " << trial << " sample " << b;
    }
  }
  EXPECT_GT(seen.size(), 25U) << "crops and flips should vary (50 possibilities)";
}

TEST(GatherBatch, RejectsAFillThatIsNotOnePerChannel) {
  const SampleShape shape{2, 3, 3};
  const Split split = numbered_split(shape, 1);
  const Augmentation augmentation{.random_crop = true, .fill = {-1.0F}};
  std::vector<float> out(shape.numel());
  std::vector<std::int64_t> label(1);
  std::uint64_t state = 1;
  const std::vector<std::uint32_t> first{0};
  EXPECT_THROW(gather_batch(split, shape, first, out, label, augmentation, state),
               std::invalid_argument);
}

TEST(GatherBatch, SameStateGivesSameAugmentation) {
  const SampleShape shape{1, 6, 6};
  const Split split = numbered_split(shape, 3);
  Augmentation augmentation{true, 2, true};
  const std::vector<std::uint32_t> indices{0, 1, 2};
  std::vector<float> a(3 * 36), b(3 * 36);
  std::vector<std::int64_t> labels(3);
  std::uint64_t state_a = 1234, state_b = 1234;
  gather_batch(split, shape, indices, a, labels, augmentation, state_a);
  gather_batch(split, shape, indices, b, labels, augmentation, state_b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(state_a, state_b);
  EXPECT_NE(state_a, 1234U);
}

TEST(GatherBatch, RejectsBadIndexAndBufferSizes) {
  const SampleShape shape{1, 2, 2};
  const Split split = numbered_split(shape, 2);
  std::vector<float> features(4);
  std::vector<std::int64_t> labels(1);
  std::uint64_t state = 0;
  const std::vector<std::uint32_t> bad_index{2};
  EXPECT_THROW(gather_batch(split, shape, bad_index, features, labels, {}, state),
               std::out_of_range);
  const std::vector<std::uint32_t> two{0, 1};
  EXPECT_THROW(gather_batch(split, shape, two, features, labels, {}, state), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::data
