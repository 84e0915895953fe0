#pragma once

#include <span>

namespace commsgd::kernels {

// x *= factor.
void scale(std::span<float> x, float factor);

// Σ x², accumulated in double so that the norm of a 25M-entry gradient keeps its digits.
double squared_norm(std::span<const float> x);

}  // namespace commsgd::kernels
