#pragma once

#include <cstddef>
#include <span>

namespace commsgd::kernels {

// The products of PowerSGD's rank-r approximation M ≈ P·Qᵀ of an n × m matrix M (row-major,
// as a parameter's gradient lies in the flat buffer, its first dimension the rows). A factor is
// stored by columns: the r columns of P (n entries each) or of Q (m entries each) one after
// another, so that every loop below runs over contiguous memory.
struct MatrixShape {
  std::size_t rows = 0;  // n
  std::size_t cols = 0;  // m
  std::size_t rank = 0;  // r
};

// Throws std::invalid_argument unless buffers of these sizes fit the shape: M n·m, P n·r, Q m·r.
void check_low_rank_sizes(std::size_t m, std::size_t p, std::size_t q, MatrixShape shape);

// p = M·q: column k of p is M times column k of q.
void multiply(std::span<const float> m, MatrixShape shape, std::span<const float> q,
              std::span<float> p);

// q = Mᵀ·p.
void multiply_transposed(std::span<const float> m, MatrixShape shape, std::span<const float> p,
                         std::span<float> q);

// M = p·qᵀ, overwriting m.
void outer_product(std::span<const float> p, std::span<const float> q, MatrixShape shape,
                   std::span<float> m);

// Orthonormalizes the `rank` columns of `length` entries each, in order, by modified Gram–Schmidt
// (PyTorch's PowerSGD hook's _orthogonalize_gram_schmidt with epsilon 0): each column divided by
// its norm, then its projection taken out of the columns after it. A column whose norm is 0 is
// left at 0 (the hook divides by it, which gives NaN).
void orthonormalize_columns(std::span<float> columns, std::size_t length, std::size_t rank);

}  // namespace commsgd::kernels
