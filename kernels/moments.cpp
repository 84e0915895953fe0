#include "kernels/moments.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <utility>

namespace commsgd::kernels {
namespace {

struct Sums {
  double shifted = 0, squared = 0;  // Σ (x - shift), Σ (x - shift)²
};

constexpr std::size_t kLanes = 16;
using Lanes = std::array<float, kLanes>;

// The lanes as a fold rather than an inner loop: unrolled at compile time, the accumulators
// become scalars that GCC's SLP vectorizer packs into registers. (An inner loop over the lanes
// is loop-vectorized with the accumulators left in memory, and ran 1.5x slower.)
template <std::size_t... J>
void accumulate(const float* __restrict p, float shift, Lanes& s1, Lanes& s2,
                std::index_sequence<J...>) {
  ((s1[J] += p[J] - shift), ...);
  ((s2[J] += (p[J] - shift) * (p[J] - shift)), ...);
}

// Whole blocks of kBlock entries (n a multiple of it) in kLanes independent float accumulators:
// float error stays at ~kBlock/kLanes roundings before the double sum. Out of line because,
// inlined into mean_std, GCC's SLP packed only some of the lanes and the pass ran 1.7x slower.
constexpr std::size_t kBlock = 1024;
[[gnu::noinline]] Sums float_block_sums(const float* __restrict p, std::size_t n, float shift) {
  Sums sums;
  for (std::size_t i = 0; i < n; i += kBlock) {
    Lanes s1{}, s2{};
    for (std::size_t b = i; b < i + kBlock; b += kLanes) {
      accumulate(p + b, shift, s1, s2, std::make_index_sequence<kLanes>{});
    }
    for (std::size_t j = 0; j < kLanes; ++j) {
      sums.shifted += s1[j];
      sums.squared += s2[j];
    }
  }
  return sums;
}

// In double: the partial block at the end, and data whose squares overflow float.
Sums double_sums(const float* p, std::size_t n, float shift, Sums sums) {
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(p[i]) - shift;
    sums.shifted += v;
    sums.squared += v * v;
  }
  return sums;
}

}  // namespace

Moments mean_std(std::span<const float> x) {
  if (x.empty()) throw std::invalid_argument("mean_std: empty input");
  const std::size_t n = x.size();
  const float shift = std::isfinite(x[0]) ? x[0] : 0.0f;
  const std::size_t blocked = n - n % kBlock;
  Sums sums = double_sums(x.data() + blocked, n - blocked, shift,
                          float_block_sums(x.data(), blocked, shift));
  // Squares above ~3e38 (|x - x[0]| above ~1e19) overflowed the float lanes: redo in double.
  if (!std::isfinite(sums.squared)) sums = double_sums(x.data(), n, shift, {});
  const double mean_shifted = sums.shifted / static_cast<double>(n);
  const double variance = sums.squared / static_cast<double>(n) - mean_shifted * mean_shifted;
  return {shift + mean_shifted, std::sqrt(std::max(variance, 0.0))};
}

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("normal_quantile: p outside (0, 1)");
  // Work in the lower half, where q = min(p, 1 - p) is exact and erfc keeps its digits.
  const double q = p < 0.5 ? p : 1.0 - p;
  if (q == 0.5) return 0.0;
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01, -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  double z;
  if (q < 0.02425) {
    const double t = std::sqrt(-2.0 * std::log(q));
    z = (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) /
        ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1.0);
  } else {
    const double u = q - 0.5, r = u * u;
    z = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // Acklam's relative error is 1.15e-9; one Halley step on Φ(z) = q brings it to rounding.
  const double e = 0.5 * std::erfc(-z / std::numbers::sqrt2) - q;
  const double h = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * z * z);
  z -= h / (1.0 + 0.5 * z * h);
  return p < 0.5 ? z : -z;
}

}  // namespace commsgd::kernels
