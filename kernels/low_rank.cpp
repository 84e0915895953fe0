#include "kernels/low_rank.hpp"

#include <cmath>
#include <stdexcept>

namespace commsgd::kernels {
namespace {

// Σ a_i·b_i with eight running sums, so that no addition waits for the one before it.
float dot(const float* a, const float* b, std::size_t n) {
  constexpr std::size_t kLanes = 8;
  float lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  float sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (const float lane : lanes) sum += lane;
  return sum;
}

// y += a·x.
void axpy(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

void check_low_rank_sizes(std::size_t m, std::size_t p, std::size_t q, MatrixShape s) {
  if (m != s.rows * s.cols || p != s.rows * s.rank || q != s.cols * s.rank) {
    throw std::invalid_argument("low rank: buffer sizes do not match the matrix shape");
  }
}

void multiply(std::span<const float> m, MatrixShape s, std::span<const float> q,
              std::span<float> p) {
  check_low_rank_sizes(m.size(), p.size(), q.size(), s);
  for (std::size_t i = 0; i < s.rows; ++i) {
    const float* row = m.data() + i * s.cols;
    for (std::size_t k = 0; k < s.rank; ++k) {
      p[k * s.rows + i] = dot(row, q.data() + k * s.cols, s.cols);
    }
  }
}

void multiply_transposed(std::span<const float> m, MatrixShape s, std::span<const float> p,
                         std::span<float> q) {
  check_low_rank_sizes(m.size(), p.size(), q.size(), s);
  for (float& x : q) x = 0;
  // Row by row through M, each adding p[i]·(row i) to every column of q.
  for (std::size_t i = 0; i < s.rows; ++i) {
    const float* row = m.data() + i * s.cols;
    for (std::size_t k = 0; k < s.rank; ++k) {
      axpy(p[k * s.rows + i], row, q.data() + k * s.cols, s.cols);
    }
  }
}

void outer_product(std::span<const float> p, std::span<const float> q, MatrixShape s,
                   std::span<float> m) {
  check_low_rank_sizes(m.size(), p.size(), q.size(), s);
  for (std::size_t i = 0; i < s.rows; ++i) {
    float* row = m.data() + i * s.cols;
    for (std::size_t j = 0; j < s.cols; ++j) row[j] = 0;
    for (std::size_t k = 0; k < s.rank; ++k)
      axpy(p[k * s.rows + i], q.data() + k * s.cols, row, s.cols);
  }
}

void orthonormalize_columns(std::span<float> columns, std::size_t length, std::size_t rank) {
  if (columns.size() != length * rank) {
    throw std::invalid_argument("orthonormalize_columns: not rank columns of length entries");
  }
  for (std::size_t k = 0; k < rank; ++k) {
    float* col = columns.data() + k * length;
    const float norm = std::sqrt(dot(col, col, length));
    if (norm > 0) {
      for (std::size_t i = 0; i < length; ++i) col[i] /= norm;
    }
    for (std::size_t later = k + 1; later < rank; ++later) {
      float* rest = columns.data() + later * length;
      axpy(-dot(col, rest, length), col, rest, length);
    }
  }
}

}  // namespace commsgd::kernels
