#include "algorithms/sparse/selector.hpp"

#include <optional>
#include <stdexcept>

#include "kernels/ops.hpp"
#include "kernels/original_selectors.hpp"
#include "kernels/sampling.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"

namespace commsgd::algorithms {
namespace {

// A seed for one iteration, from a base seed: a new set of indices every iteration.
std::uint64_t iteration_seed(std::uint64_t seed, std::uint64_t iteration) {
  return seed ^ (0x9E3779B97F4A7C15ull * (iteration + 1));
}

using kernels::ops::DeviceSelection;
using kernels::ops::SelectionKernel;

// A selector around a host kernel, and around its CUDA twin where it has one.
class KernelSelector : public Selector {
 public:
  explicit KernelSelector(std::optional<SelectionKernel> twin) {
    if (twin) twin_.emplace(*twin);
  }
  bool works_in(kernels::Memory memory) const override {
    return memory == kernels::Memory::host || twin_.has_value();
  }

 protected:
  // The twin's arguments for this call: gaussian's density, random's seed.
  void select_twin(kernels::Buffer<const float> acc, std::size_t k, double density,
                   std::uint64_t seed, kernels::SparseSet& out) {
    if (!twin_) return Selector::select_on_device(acc, k, density, seed, out);
    twin_->select(acc, k, density, seed, out);
  }

 private:
  std::optional<DeviceSelection> twin_;
};

// A kernel that needs nothing but the entries and k: exact, dgc (with CUDA twins), redsync.
template <class Kernel>
class KSelector final : public KernelSelector {
 public:
  explicit KSelector(std::optional<SelectionKernel> twin = std::nullopt) : KernelSelector(twin) {}
  void select(std::span<const float> acc, std::size_t k, double, std::uint64_t,
              kernels::SparseSet& out) override {
    kernel_.select(acc, k, out);
  }

 protected:
  void select_on_device(kernels::Buffer<const float> acc, std::size_t k, double, std::uint64_t,
                        kernels::SparseSet& out) override {
    select_twin(acc, k, 0, 0, out);
  }

 private:
  Kernel kernel_;
};

// ρ = k/d: the density k = ceil(ρ·d) stands for (equal to --density once d·ρ is whole).
double density_of(std::size_t k, std::size_t d) {
  return static_cast<double>(k) / static_cast<double>(d);
}

class GaussianSelector final : public KernelSelector {
 public:
  GaussianSelector() : KernelSelector(SelectionKernel::gaussian) {}
  void select(std::span<const float> acc, std::size_t k, double, std::uint64_t,
              kernels::SparseSet& out) override {
    gaussian_.select(acc, k, density_of(k, acc.size()), out);
  }

 protected:
  void select_on_device(kernels::Buffer<const float> acc, std::size_t k, double, std::uint64_t,
                        kernels::SparseSet& out) override {
    select_twin(acc, k, density_of(k, acc.size()), 0, out);
  }

 private:
  kernels::GaussianSelector gaussian_;
};

// A kernel drawing at random from a seed, a new one every iteration: random-k (with a CUDA twin
// drawing the same indices) and the GaussianK-SGD code's DGC sample. Given --seed alone, every
// rank draws the same; given a rank's own seed (rank_seed), each draws its own, as the original's
// unseeded torch.randperm does.
template <class Kernel>
class SeededSelector final : public KernelSelector {
 public:
  explicit SeededSelector(std::uint64_t seed, std::optional<SelectionKernel> twin = std::nullopt)
      : KernelSelector(twin), seed_(seed) {}
  void select(std::span<const float> acc, std::size_t k, double, std::uint64_t iteration,
              kernels::SparseSet& out) override {
    kernel_.select(acc, k, iteration_seed(seed_, iteration), out);
  }

 protected:
  void select_on_device(kernels::Buffer<const float> acc, std::size_t k, double,
                        std::uint64_t iteration, kernels::SparseSet& out) override {
    select_twin(acc, k, 0, iteration_seed(seed_, iteration), out);
  }

 private:
  std::uint64_t seed_;
  Kernel kernel_;
};

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  return seed + 0xD1B54A32D192ED03ull * (static_cast<std::uint64_t>(rank) + 1);
}

class GksgdGaussianSelector final : public Selector {
 public:
  void select(std::span<const float> acc, std::size_t k, double density, std::uint64_t,
              kernels::SparseSet& out) override {
    gaussian_.select(acc, k, density, out);
  }

 private:
  kernels::GksgdGaussianSelector gaussian_;
};

}  // namespace

void Selector::select_on_device(kernels::Buffer<const float>, std::size_t, double, std::uint64_t,
                                kernels::SparseSet&) {
  throw std::logic_error("this selector has no CUDA twin: its input must be in host memory");
}

ExtensionTable<SelectorRow>& selector_table() {
  static ExtensionTable<SelectorRow> table(
      "--selector", "selector",
      {
          {"exact", "the k largest |acc| (ties: smaller index)",
           [](const AlgorithmConfig&, int) -> std::unique_ptr<Selector> {
             return std::make_unique<KSelector<kernels::TopkSelector>>(SelectionKernel::exact);
           }},
          {"gaussian",
           "|acc| above |mean| + std·Φ⁻¹(1 − k/2d), refined up to 3 times (Gaussian-k paper)",
           [](const AlgorithmConfig&, int) -> std::unique_ptr<Selector> {
             return std::make_unique<GaussianSelector>();
           }},
          {"dgc", "|acc| above the k-th largest of a 1% strided sample, scaled (DGC paper)",
           [](const AlgorithmConfig&, int) -> std::unique_ptr<Selector> {
             return std::make_unique<KSelector<kernels::DgcSelector>>(SelectionKernel::dgc);
           }},
          {"random", "k indices drawn from a seed all ranks share, new every iteration",
           [](const AlgorithmConfig& config, int) -> std::unique_ptr<Selector> {
             return std::make_unique<SeededSelector<kernels::RandomSelector>>(
                 config.seed, SelectionKernel::random);
           }},
          {"gaussian-gksgd",
           "Gaussian-k as the GaussianK-SGD code computes it: signed mean, unbiased std, 2 "
           "refinements",
           [](const AlgorithmConfig&, int) -> std::unique_ptr<Selector> {
             return std::make_unique<GksgdGaussianSelector>();
           }},
          {"dgc-gksgd",
           "the GaussianK-SGD code's DGC: random 1% sample, its k-th largest unscaled, top-k of "
           "the candidates",
           [](const AlgorithmConfig& config, int rank) -> std::unique_ptr<Selector> {
             return std::make_unique<SeededSelector<kernels::GksgdDgcSelector>>(
                 rank_seed(config.seed, rank));
           }},
          {"random-independent",
           "k random indices drawn by each rank on its own (the GaussianK-SGD code's randomk; "
           "with error feedback its randomkec)",
           [](const AlgorithmConfig& config, int rank) -> std::unique_ptr<Selector> {
             return std::make_unique<SeededSelector<kernels::RandomSelector>>(
                 rank_seed(config.seed, rank), SelectionKernel::random);
           }},
          {"redsync",
           "RedSync's threshold, bisected between mean and max of |acc| (GaussianK-SGD code)",
           [](const AlgorithmConfig&, int) -> std::unique_ptr<Selector> {
             return std::make_unique<KSelector<kernels::RedsyncSelector>>();
           }},
      });
  return table;
}

std::unique_ptr<Selector> make_selector(const AlgorithmConfig& config, int rank) {
  return selector_table().find(config.selector).make(config, rank);
}

}  // namespace commsgd::algorithms
