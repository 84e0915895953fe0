#pragma once

#include <span>

namespace commsgd::kernels {

struct Moments {
  double mean = 0, stddev = 0;  // population standard deviation
};

// One pass: float partial sums over blocks (vectorized), combined in double. Values are shifted
// by x[0] first so that a mean far from zero does not cancel the variance away. NaN or infinite
// entries give non-finite moments. Throws std::invalid_argument on an empty x.
Moments mean_std(std::span<const float> x);

// Φ⁻¹(p), the standard normal quantile, for p in (0, 1) (else std::invalid_argument); absolute
// error below 1e-9 down to p = 1e-300 (Acklam's approximation refined by one Halley step).
double normal_quantile(double p);

}  // namespace commsgd::kernels
