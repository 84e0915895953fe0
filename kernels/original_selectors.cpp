#include "kernels/original_selectors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "kernels/abs_order.hpp"
#include "kernels/moments.hpp"
#include "kernels/threshold.hpp"

namespace commsgd::kernels {
namespace {

void check_k(std::span<const float> x, std::size_t k, const char* who) {
  if (k < 1 || k > x.size()) throw std::invalid_argument(std::string(who) + ": k outside [1, d]");
}

}  // namespace

void GksgdGaussianSelector::select(std::span<const float> x, std::size_t k, double density,
                                   SparseSet& out) {
  check_k(x, k, "gaussian-gksgd select");
  if (!(density > 0.0 && density <= 1.0)) {
    throw std::invalid_argument("gaussian-gksgd select: density outside (0, 1]");
  }
  const Moments m = mean_std(x);
  const auto n = static_cast<double>(x.size());
  const double unbiased = x.size() > 1 ? m.stddev * std::sqrt(n / (n - 1)) : 0.0;
  double threshold = m.mean + unbiased * normal_quantile(1.0 - density / 2.0);
  for (int counts = 1; counts < 3; ++counts) {
    const std::size_t count = count_abs_greater(x, threshold_as_float(threshold));
    if (3 * count < 2 * k) {
      threshold *= 0.5;
    } else if (3 * count > 4 * k) {
      threshold *= 1.5;
    } else {
      break;
    }
  }
  select_abs_greater(x, threshold_as_float(threshold), out);
}

void GksgdDgcSelector::select(std::span<const float> x, std::size_t k, std::uint64_t seed,
                              SparseSet& out) {
  check_k(x, k, "dgc-gksgd select");
  const std::size_t m = x.size() / 100;
  if (m < k) {
    topk_.select(x, k, out);
    return;
  }
  sample_indices_.resize(m);
  sampler_.pick(x.size(), m, seed, sample_indices_);
  sample_.resize(m);
  for (std::size_t i = 0; i < m; ++i) sample_[i] = x[sample_indices_[i]];
  const float threshold = std::bit_cast<float>(rank_key(sample_, k).key);
  select_abs_greater(x, threshold, out);
  if (3 * out.size() > 4 * k) keep_top_k(out, k);
}

void RedsyncSelector::select(std::span<const float> x, std::size_t k, SparseSet& out) {
  check_k(x, k, "redsync select");
  double sum = 0;
  float largest = 0;
  for (const float v : x) {
    sum += std::abs(v);
    largest = std::max(largest, std::abs(v));
  }
  const float mean = static_cast<float>(sum / static_cast<double>(x.size()));
  double low = 0.0, high = 1.0;
  float threshold = mean;
  while (high - low > 0.2) {
    const double middle = low + (high - low) / 2;
    threshold = mean + static_cast<float>(middle) * (largest - mean);
    const std::size_t count = count_abs_greater(x, threshold);
    if (count > k && count < 2 * k) break;
    if (2 * count < k) {
      high = middle;
    } else {
      low = middle;
    }
  }
  select_abs_greater(x, threshold, out);
}

}  // namespace commsgd::kernels
