// The compressed family's CUDA kernels (kernels/cuda/sign_bits.hpp, qsgd.hpp, low_rank.hpp)
// against the CPU kernels, which test_sign_bits, test_qsgd and test_low_rank check against their
// definitions: the signs, QSGD's norms (summed in the same order, kernels/qsgd_blocks.hpp) and
// codes must have the CPU's bits, the low-rank products its values to rounding. Without a CUDA
// device these tests skip, saying so; the argument checks, which run before any device call, run
// everywhere.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/low_rank.hpp"
#include "kernels/cuda/qsgd.hpp"
#include "kernels/cuda/sign_bits.hpp"
#include "kernels/low_rank.hpp"
#include "kernels/qsgd.hpp"
#include "kernels/sign_bits.hpp"
#include "tests/support/cuda_stream_test.hpp"
#include "tests/support/normal_values.hpp"

namespace commsgd::kernels {
namespace {

using testing::DeviceCopy;
using CudaCompressedKernels = testing::CudaStreamTest;

// N(0, 1) values with the entries whose sign is a convention: ±0, NaN, ±inf.
std::vector<float> with_special_values(std::size_t n, unsigned seed) {
  std::vector<float> v = testing::normal_values(n, seed);
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};
  for (std::size_t i = 0; i < n; i += 7) v[i] = special[(i / 7) % std::size(special)];
  return v;
}

void expect_same_bits(const std::vector<float>& cpu, const std::vector<float>& gpu,
                      const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(cpu[i]), std::bit_cast<std::uint32_t>(gpu[i]))
        << what << ": entry " << i;
  }
}

// Within `tolerance` of the CPU's values, relative to their largest magnitude.
void expect_close(const std::vector<float>& cpu, const std::vector<float>& gpu, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  double largest = 0;
  for (const float x : cpu) largest = std::max(largest, std::fabs(double(x)));
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_NEAR(cpu[i], gpu[i], tolerance * largest) << what << ": entry " << i;
  }
}

constexpr std::size_t kSizes[] = {1, 63, 64, 65, 1000, 100'003};

TEST_F(CudaCompressedKernels, PackedSignsAreTheCpus) {
  for (const std::size_t n : kSizes) {
    const std::vector<float> v = with_special_values(n, 1);
    std::vector<std::uint64_t> expected(sign_words(n));
    pack_signs(v, expected);
    DeviceCopy<float> dv(v, stream_);
    DeviceCopy<std::uint64_t> bits(std::vector<std::uint64_t>(sign_words(n), ~0ull), stream_);
    cuda::pack_signs(dv.data(), n, bits.data(), stream_);
    EXPECT_EQ(bits.download(stream_), expected) << "n = " << n;
  }
}

TEST_F(CudaCompressedKernels, AddedSignsAndSignsInPlaceAreTheCpus) {
  for (const std::size_t n : kSizes) {
    const std::vector<float> v = with_special_values(n + 37, 2);
    std::vector<std::uint64_t> bits(sign_words(v.size()));
    pack_signs(v, bits);
    // Entries 37 .. of the packed vector, added to values of their own: a tensor's share.
    std::vector<float> expected = testing::normal_values(n, 3);
    DeviceCopy<float> out(expected, stream_);
    DeviceCopy<std::uint64_t> dbits(bits, stream_);
    add_signs(bits, 37, 0.25f, expected);
    cuda::add_signs(dbits.data(), 37, 0.25f, out.data(), n, stream_);
    expect_same_bits(expected, out.download(stream_), "add_signs, n = " + std::to_string(n));

    std::vector<float> signs = with_special_values(n, 4);
    DeviceCopy<float> dsigns(signs, stream_);
    sign_in_place(signs);
    cuda::sign_in_place(dsigns.data(), n, stream_);
    expect_same_bits(signs, dsigns.download(stream_), "sign_in_place, n = " + std::to_string(n));
  }
}

TEST_F(CudaCompressedKernels, L1NormIsTheCpusToRounding) {
  for (const std::size_t n : kSizes) {
    const std::vector<float> v = testing::normal_values(n, 5);
    DeviceCopy<float> dv(v, stream_);
    const double expected = l1_norm(v);
    EXPECT_NEAR(cuda::l1_norm(dv.data(), n, stream_), expected, 1e-12 * expected) << "n = " << n;
  }
}

struct QsgdCase {
  std::size_t n, bucket;
  unsigned levels;
};
constexpr QsgdCase kQsgdCases[] = {
    {100'003, 512, 4}, {100'003, 128, 16}, {1000, 1000, 1}, {5000, 77, 255}, {3, 512, 4}};

std::string name(const QsgdCase& c) {
  return "n = " + std::to_string(c.n) + ", bucket " + std::to_string(c.bucket) +
         ", s = " + std::to_string(c.levels);
}

TEST_F(CudaCompressedKernels, QsgdCodesAndNormsAreTheCpus) {
  for (const QsgdCase& c : kQsgdCases) {
    std::vector<float> v = testing::normal_values(c.n, 6);
    if (c.n > c.bucket) {  // bucket 1 of norm 0
      std::fill_n(v.begin() + c.bucket, std::min(c.bucket, c.n - c.bucket), 0.0f);
    }
    const std::size_t buckets = (c.n + c.bucket - 1) / c.bucket;
    const std::size_t words = qsgd_code_words(c.n, c.bucket, c.levels);
    const std::uint64_t key = qsgd_key(7, 11);
    std::vector<std::uint64_t> code(words);
    std::vector<float> norms(buckets);
    qsgd_encode_buckets(v, c.bucket, c.levels, key, code, norms);

    DeviceCopy<float> dv(v, stream_);
    DeviceCopy<std::uint64_t> dcode(std::vector<std::uint64_t>(words, ~0ull), stream_);
    DeviceCopy<float> dnorms(std::vector<float>(buckets), stream_);
    cuda::qsgd_encode_buckets(dv.data(), c.n, c.bucket, c.levels, key, dcode.data(), dnorms.data(),
                              stream_);
    expect_same_bits(norms, dnorms.download(stream_), name(c));
    const std::vector<std::uint64_t> gpu_code = dcode.download(stream_);
    for (std::size_t w = 0; w < words; ++w) {
      ASSERT_EQ(gpu_code[w], code[w]) << name(c) << ", word " << w;
    }
  }
}

TEST_F(CudaCompressedKernels, QsgdDecodingIsTheCpus) {
  for (const QsgdCase& c : kQsgdCases) {
    const std::vector<float> v = testing::normal_values(c.n, 8);
    const std::size_t buckets = (c.n + c.bucket - 1) / c.bucket;
    std::vector<std::uint64_t> code(qsgd_code_words(c.n, c.bucket, c.levels));
    std::vector<float> norms(buckets);
    qsgd_encode_buckets(v, c.bucket, c.levels, qsgd_key(9, 1), code, norms);
    std::vector<float> expected = testing::normal_values(c.n, 10);
    DeviceCopy<float> out(expected, stream_);
    DeviceCopy<std::uint64_t> dcode(code, stream_);
    DeviceCopy<float> dnorms(norms, stream_);
    qsgd_decode_add_buckets(code, norms, c.bucket, c.levels, 0.25f, expected);
    cuda::qsgd_decode_add_buckets(dcode.data(), dnorms.data(), c.n, c.bucket, c.levels, 0.25f,
                                  out.data(), stream_);
    expect_same_bits(expected, out.download(stream_), name(c));
  }
}

// Refused before anything reaches a device, so these run everywhere.
TEST(CudaCompressedArguments, QsgdRefusesAnEmptyBucketAndNoLevels) {
  EXPECT_THROW(cuda::qsgd_encode_buckets(nullptr, 10, 0, 4, 0, nullptr, nullptr, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::qsgd_encode_buckets(nullptr, 10, 8, 0, 0, nullptr, nullptr, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::qsgd_decode_add_buckets(nullptr, nullptr, 10, 0, 4, 1, nullptr, nullptr),
               std::invalid_argument);
}

constexpr MatrixShape kShapes[] = {{64, 300, 1}, {64, 300, 4}, {1, 5, 1}, {300, 7, 2}};

std::string name(const MatrixShape& s) {
  return std::to_string(s.rows) + " x " + std::to_string(s.cols) + ", rank " +
         std::to_string(s.rank);
}

TEST_F(CudaCompressedKernels, LowRankProductsAreTheCpusToRounding) {
  for (const MatrixShape& s : kShapes) {
    const std::vector<float> m = testing::normal_values(s.rows * s.cols, 11);
    const std::vector<float> q = testing::normal_values(s.cols * s.rank, 12);
    std::vector<float> p(s.rows * s.rank), q_back(s.cols * s.rank), m_back(s.rows * s.cols);
    multiply(m, s, q, p);
    multiply_transposed(m, s, p, q_back);
    outer_product(p, q_back, s, m_back);

    DeviceCopy<float> dm(m, stream_), dq(q, stream_), dp(p, stream_), dq_back(q_back, stream_),
        dm_back(m_back, stream_);
    cuda::multiply(dm.data(), s, dq.data(), dp.data(), stream_);
    expect_close(p, dp.download(stream_), 1e-5, "multiply, " + name(s));
    // Each from the CPU's operands, so that the errors do not compound.
    DeviceCopy<float> cpu_p(p, stream_), cpu_q_back(q_back, stream_);
    cuda::multiply_transposed(dm.data(), s, cpu_p.data(), dq_back.data(), stream_);
    expect_close(q_back, dq_back.download(stream_), 1e-5, "multiply_transposed, " + name(s));
    cuda::outer_product(cpu_p.data(), cpu_q_back.data(), s, dm_back.data(), stream_);
    expect_close(m_back, dm_back.download(stream_), 1e-5, "outer_product, " + name(s));
  }
}

TEST_F(CudaCompressedKernels, OrthonormalizedColumnsAreTheCpusToRounding) {
  for (const MatrixShape& s : kShapes) {
    std::vector<float> columns = testing::normal_values(s.rows * s.rank, 13);
    if (s.rank > 1) std::fill_n(columns.begin(), s.rows, 0.0f);  // a column of norm 0
    DeviceCopy<float> dcolumns(columns, stream_);
    orthonormalize_columns(columns, s.rows, s.rank);
    cuda::orthonormalize_columns(dcolumns.data(), s.rows, s.rank, stream_);
    expect_close(columns, dcolumns.download(stream_), 1e-5, "orthonormalize, " + name(s));
  }
}

}  // namespace
}  // namespace commsgd::kernels
