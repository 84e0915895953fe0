#pragma once

#include <span>

namespace commsgd::kernels {

// x *= factor.
void scale(std::span<float> x, float factor);

// Σ x², accumulated in double so that the norm of a 25M-entry gradient keeps its digits.
double squared_norm(std::span<const float> x);

// Σ (a − b)², in double (sizes equal).
double squared_distance(std::span<const float> a, std::span<const float> b);

// Gossip's mixing: x = (x + Σ_b blocks_b)·share, where blocks holds whole blocks of x's size
// back to back, added in order (share 1: a plain sum, exactly).
void add_blocks(std::span<float> x, std::span<const float> blocks, float share);

// x −= y (sizes equal).
void subtract(std::span<float> x, std::span<const float> y);

// x += a − b, the difference rounded first (sizes equal).
void add_difference(std::span<float> x, std::span<const float> a, std::span<const float> b);

}  // namespace commsgd::kernels
