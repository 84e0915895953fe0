// Synthetic Gaussian-mixture classification data: learnable, tiny, and
// bit-identical for a given seed on every platform.
#include <cmath>
#include <numbers>
#include <string>

#include "trainer/data/dataset.hpp"
#include "trainer/data/loaders.hpp"
#include "trainer/data/rng.hpp"

namespace commsgd::data {

namespace {

constexpr std::string_view kLoader = "synthetic";

// Separate streams keep the train and validation draws independent of each
// other's sizes: growing synthetic_train does not change the validation set.
enum Stream : std::uint64_t { kPrototypes = 0, kTrain = 1, kValidation = 2 };

// Box-Muller; the second value of each pair is kept for the next call.
class NormalGenerator {
 public:
  explicit NormalGenerator(std::uint64_t state) : state_(state) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(state_);  // (0, 1], so log() is finite
    const double u2 = uniform01(state_);
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

Split draw_split(const std::vector<float>& prototypes, std::size_t numel, int classes,
                 std::size_t count, std::uint64_t state) {
  std::uint64_t label_state = splitmix64_next(state);
  NormalGenerator noise(splitmix64_next(state));
  Split split;
  split.labels.reserve(count);
  split.features.reserve(count * numel);
  for (std::size_t i = 0; i < count; ++i) {
    const auto label =
        static_cast<std::int32_t>(uniform_below(label_state, static_cast<std::uint64_t>(classes)));
    split.labels.push_back(label);
    const float* prototype = prototypes.data() + static_cast<std::size_t>(label) * numel;
    for (std::size_t j = 0; j < numel; ++j) {
      split.features.push_back(prototype[j] + static_cast<float>(noise.next()));
    }
  }
  return split;
}

}  // namespace

Dataset load_synthetic(const DatasetOptions& options) {
  require_positive_shape(kLoader, "synthetic_shape", options.synthetic_shape);
  if (options.synthetic_classes < 1) {
    throw DataError("synthetic: synthetic_classes " + std::to_string(options.synthetic_classes) +
                    " must be >= 1");
  }
  if (options.synthetic_train == 0) throw DataError("synthetic: synthetic_train must be >= 1");

  const std::size_t numel = options.synthetic_shape.numel();
  const int classes = options.synthetic_classes;
  NormalGenerator prototype_draws(derive_seed(options.seed, kPrototypes));
  std::vector<float> prototypes(static_cast<std::size_t>(classes) * numel);
  for (float& value : prototypes) value = static_cast<float>(prototype_draws.next());

  Dataset dataset;
  dataset.name = kLoader;
  dataset.shape = options.synthetic_shape;
  dataset.num_classes = classes;
  dataset.train = draw_split(prototypes, numel, classes, options.synthetic_train,
                             derive_seed(options.seed, kTrain));
  dataset.validation = draw_split(prototypes, numel, classes, options.synthetic_val,
                                  derive_seed(options.seed, kValidation));
  return dataset;
}

}  // namespace commsgd::data
