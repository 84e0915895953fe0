#include "algorithms/sparse/selector.hpp"

#include <stdexcept>

#include "kernels/sampling.hpp"
#include "kernels/threshold.hpp"
#include "kernels/topk.hpp"

namespace commsgd::algorithms {
namespace {

class ExactSelector final : public Selector {
 public:
  void select(std::span<const float> acc, std::size_t k, std::uint64_t,
              kernels::SparseSet& out) override {
    topk_.select(acc, k, out);
  }

 private:
  kernels::TopkSelector topk_;
};

class GaussianSelector final : public Selector {
 public:
  void select(std::span<const float> acc, std::size_t k, std::uint64_t,
              kernels::SparseSet& out) override {
    // ρ = k/d: the density k = ceil(ρ·d) stands for (equal to --density once d·ρ is whole).
    gaussian_.select(acc, k, static_cast<double>(k) / static_cast<double>(acc.size()), out);
  }

 private:
  kernels::GaussianSelector gaussian_;
};

class DgcSelector final : public Selector {
 public:
  void select(std::span<const float> acc, std::size_t k, std::uint64_t,
              kernels::SparseSet& out) override {
    dgc_.select(acc, k, out);
  }

 private:
  kernels::DgcSelector dgc_;
};

class RandomSelector final : public Selector {
 public:
  explicit RandomSelector(std::uint64_t seed) : seed_(seed) {}
  void select(std::span<const float> acc, std::size_t k, std::uint64_t iteration,
              kernels::SparseSet& out) override {
    // A new set every iteration, the same on every rank.
    random_.select(acc, k, seed_ ^ (0x9E3779B97F4A7C15ull * (iteration + 1)), out);
  }

 private:
  std::uint64_t seed_;
  kernels::RandomSelector random_;
};

}  // namespace

const std::vector<std::string>& selector_names() {
  static const std::vector<std::string> names = {"exact", "gaussian", "dgc", "random"};
  return names;
}

std::unique_ptr<Selector> make_selector(const std::string& name, std::uint64_t seed) {
  if (name == "exact") return std::make_unique<ExactSelector>();
  if (name == "gaussian") return std::make_unique<GaussianSelector>();
  if (name == "dgc") return std::make_unique<DgcSelector>();
  if (name == "random") return std::make_unique<RandomSelector>(seed);
  throw std::invalid_argument("--selector: unknown selector '" + name + "'");
}

}  // namespace commsgd::algorithms
