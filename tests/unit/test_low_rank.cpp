// PowerSGD's products and orthonormalization (kernels/low_rank.hpp) against plain loops in
// double: every factor stored by columns.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/low_rank.hpp"
#include "tests/support/normal_values.hpp"

namespace commsgd::kernels {
namespace {

using testing::normal_values;

// Shapes with lengths that are and are not multiples of the eight lanes, and a rank of 1.
const std::vector<MatrixShape> kShapes = {{40, 30, 2}, {17, 75, 3}, {9, 8, 1}, {64, 5, 4}};

TEST(LowRank, ProductsEqualPlainLoops) {
  for (const MatrixShape s : kShapes) {
    const std::vector<float> m = normal_values(s.rows * s.cols, 1);
    const std::vector<float> q = normal_values(s.cols * s.rank, 2);
    const std::vector<float> p_in = normal_values(s.rows * s.rank, 3);
    std::vector<float> p(s.rows * s.rank), q_out(s.cols * s.rank), m_out(s.rows * s.cols);
    multiply(m, s, q, p);
    multiply_transposed(m, s, p_in, q_out);
    outer_product(p_in, q, s, m_out);
    for (std::size_t k = 0; k < s.rank; ++k) {
      for (std::size_t i = 0; i < s.rows; ++i) {
        double mq = 0;
        for (std::size_t j = 0; j < s.cols; ++j)
          mq += double{m[i * s.cols + j]} * q[k * s.cols + j];
        EXPECT_NEAR(p[k * s.rows + i], mq, 1e-4) << "M·Q " << s.rows << "x" << s.cols;
      }
      for (std::size_t j = 0; j < s.cols; ++j) {
        double mtp = 0;
        for (std::size_t i = 0; i < s.rows; ++i)
          mtp += double{m[i * s.cols + j]} * p_in[k * s.rows + i];
        EXPECT_NEAR(q_out[k * s.cols + j], mtp, 1e-4) << "Mᵀ·P " << s.rows << "x" << s.cols;
      }
    }
    for (std::size_t i = 0; i < s.rows; ++i) {
      for (std::size_t j = 0; j < s.cols; ++j) {
        double pq = 0;
        for (std::size_t k = 0; k < s.rank; ++k)
          pq += double{p_in[k * s.rows + i]} * q[k * s.cols + j];
        EXPECT_NEAR(m_out[i * s.cols + j], pq, 1e-4) << "P·Qᵀ " << s.rows << "x" << s.cols;
      }
    }
  }
}

double dot(const float* a, const float* b, std::size_t n) {
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += double{a[i]} * b[i];
  return sum;
}

// The columns come out orthonormal, and each spans what the columns up to it spanned: column k
// has no component along a later input column that the earlier ones do not explain.
TEST(LowRank, GramSchmidtMakesOrthonormalColumnsSpanningTheSame) {
  constexpr std::size_t kLength = 37, kRank = 4;
  const std::vector<float> input = normal_values(kLength * kRank, 4);
  std::vector<float> columns = input;
  orthonormalize_columns(columns, kLength, kRank);
  for (std::size_t a = 0; a < kRank; ++a) {
    for (std::size_t b = 0; b < kRank; ++b) {
      EXPECT_NEAR(dot(&columns[a * kLength], &columns[b * kLength], kLength), a == b ? 1.0 : 0.0,
                  1e-5);
    }
    // Input column a lies in the span of output columns 0..a.
    std::vector<double> residual(input.begin() + a * kLength, input.begin() + (a + 1) * kLength);
    for (std::size_t b = 0; b <= a; ++b) {
      const double along = dot(&input[a * kLength], &columns[b * kLength], kLength);
      for (std::size_t i = 0; i < kLength; ++i) residual[i] -= along * columns[b * kLength + i];
    }
    double left = 0;
    for (const double x : residual) left += x * x;
    EXPECT_LT(std::sqrt(left), 1e-4) << "column " << a;
  }
  // Gram–Schmidt's signs: each column's component along its own input column is positive.
  for (std::size_t a = 0; a < kRank; ++a) {
    EXPECT_GT(dot(&input[a * kLength], &columns[a * kLength], kLength), 0.0);
  }
}

TEST(LowRank, AZeroColumnStaysZero) {
  std::vector<float> columns = {0, 0, 0, 3, 4, 0};
  orthonormalize_columns(columns, 3, 2);
  EXPECT_EQ(columns, (std::vector<float>{0, 0, 0, 0.6f, 0.8f, 0}));
}

TEST(LowRank, RefusesBuffersOfAnotherShape) {
  std::vector<float> m(12), q(4), p(3);
  EXPECT_THROW(multiply(m, {3, 4, 1}, q, std::span(p).first(2)), std::invalid_argument);
  EXPECT_THROW(orthonormalize_columns(m, 5, 2), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::kernels
