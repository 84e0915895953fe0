#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/half_precision.hpp"

namespace commsgd::kernels {
namespace {

// The binary16 value of h from its definition, for finite h.
double fp16_value(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const double mantissa = h & 0x3FF;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                         : std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// Round to nearest, ties to even, by search: of the two representable neighbours of x (where the
// one past the largest finite value is the first power of two beyond it, standing for Inf), the
// nearer; `value` decodes a non-negative encoding.
template <class Value>
std::uint16_t nearest(float x, std::uint16_t largest_finite, Value value) {
  const double v = std::fabs(static_cast<double>(x));
  std::uint16_t low = 0, high = largest_finite;  // the last encoding whose value is <= v
  while (low < high) {
    const auto mid = static_cast<std::uint16_t>((low + high + 1) / 2);
    if (value(mid) <= v) {
      low = mid;
    } else {
      high = static_cast<std::uint16_t>(mid - 1);
    }
  }
  const std::uint16_t below = low;
  const double next = below == largest_finite ? 2 * std::ldexp(1.0, std::ilogb(value(below)))
                                              : value(static_cast<std::uint16_t>(below + 1));
  const double to_below = v - value(below), to_above = next - v;
  const bool up = to_above < to_below || (to_above == to_below && (below & 1) != 0);
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  return sign | static_cast<std::uint16_t>(below + (up ? 1 : 0));
}

// Floats spread over every exponent a half or bfloat16 can round to, and then some.
std::vector<float> spread_floats(float smallest, float largest) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits(std::bit_cast<std::uint32_t>(smallest),
                                                    std::bit_cast<std::uint32_t>(largest));
  std::vector<float> x;
  for (int i = 0; i < 200000; ++i) {
    const float v = std::bit_cast<float>(bits(rng));
    x.push_back(i % 2 == 0 ? v : -v);
  }
  return x;
}

TEST(HalfPrecision, Fp16DecodesEveryEncodingByItsDefinition) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto e = static_cast<std::uint16_t>(h);
    const float f = from_fp16(e);
    if (((e >> 10) & 0x1F) == 0x1F) {
      EXPECT_EQ(std::isnan(f), (e & 0x3FF) != 0) << h;
      if ((e & 0x3FF) == 0) {
        EXPECT_TRUE(std::isinf(f)) << h;
      }
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), fp16_value(e)) << h;
    ASSERT_EQ(to_fp16(f), e) << "round trip of " << h;
  }
}

TEST(HalfPrecision, Fp16RoundsToNearestTiesToEven) {
  const auto value = [](std::uint16_t h) { return fp16_value(h); };
  for (const float x : spread_floats(1e-9f, 7e4f)) {
    ASSERT_EQ(to_fp16(x), nearest(x, 0x7BFF, value)) << x;
  }
  // Exact ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 and goes to the even 1;
  // 1 + 3·2^-11 goes up to the even 1 + 2^-9.
  EXPECT_EQ(to_fp16(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(to_fp16(65519.0f), 0x7BFF);  // just below the tie with Inf
  EXPECT_EQ(to_fp16(65520.0f), 0x7C00);
  EXPECT_EQ(to_fp16(-1e30f), 0xFC00);
  EXPECT_EQ(to_fp16(0x1p-25f), 0x0000);         // half of the smallest subnormal: to even 0
  EXPECT_EQ(to_fp16(0x1p-25f * 1.5f), 0x0001);  // above half: up
  EXPECT_TRUE(std::isnan(from_fp16(to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_fp16(-0.0f), 0x8000);
}

TEST(HalfPrecision, Bf16RoundsToNearestTiesToEven) {
  const auto value = [](std::uint16_t h) { return static_cast<double>(from_bf16(h)); };
  for (const float x : spread_floats(1e-30f, 3e38f)) {
    ASSERT_EQ(to_bf16(x), nearest(x, 0x7F7F, value)) << x;
  }
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f), 0x3F80);  // a tie, to the even 1
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::bit_cast<float>(0x7F800001u)))));  // not to Inf
}

TEST(HalfPrecision, SpansAndSumsConvertEachElement) {
  const std::vector<float> x = {0.1f, -2.5f, 1e-6f, 3e4f, 7.0f};
  std::vector<std::uint16_t> h(x.size()), b(x.size());
  std::vector<float> back(x.size());
  to_fp16(x, h);
  to_bf16(x, b);
  from_fp16(h, back);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(h[i], to_fp16(x[i]));
    EXPECT_EQ(b[i], to_bf16(x[i]));
    EXPECT_EQ(back[i], from_fp16(h[i]));
    EXPECT_NEAR(back[i], x[i], std::fabs(x[i]) * 0x1p-11f + 0x1p-24f);
  }
  std::vector<std::uint16_t> sum = h;
  add_fp16(h, sum);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(sum[i], to_fp16(2 * from_fp16(h[i])));
  std::vector<std::uint16_t> bsum = b;
  add_bf16(b, bsum);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bsum[i], to_bf16(2 * from_bf16(b[i])));
}

}  // namespace
}  // namespace commsgd::kernels
