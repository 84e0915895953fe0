// kernels/sign_bits.hpp: packing signs a bit an entry and decoding them, as signSGD and
// EF-signSGD exchange them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/sign_bits.hpp"
#include "tests/support/normal_values.hpp"

namespace commsgd::kernels {
namespace {

using testing::normal_values;

// Sizes around whole words, so that the partial last word is checked too.
class SignSizes : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SignSizes, PackThenDecodeGivesEverySignBack) {
  const std::size_t n = GetParam();
  std::vector<float> v = normal_values(n, 7);
  if (n > 3) {
    v[0] = 0.0f, v[1] = -0.0f, v[2] = std::numeric_limits<float>::quiet_NaN();  // positive, all
  }
  std::vector<std::uint64_t> bits(sign_words(n), ~std::uint64_t{0});
  pack_signs(v, bits);
  std::vector<float> decoded(n, 0.0f);
  add_signs(bits, 0, 2.5f, decoded);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(decoded[i], v[i] < 0.0f ? -2.5f : 2.5f) << "entry " << i << " of " << n;
  }
  if (n % kSignsPerWord != 0) {
    EXPECT_EQ(bits.back() >> (n % kSignsPerWord), 0u) << "the unused bits of the last word";
  }
}

INSTANTIATE_TEST_SUITE_P(Entries, SignSizes, ::testing::Values(1, 63, 64, 65, 128, 1000, 5003));

TEST(SignBits, AddSignsDecodesAStretchFromItsOffsetAndAdds) {
  const std::vector<float> v = normal_values(300, 3);
  std::vector<std::uint64_t> bits(sign_words(v.size()));
  pack_signs(v, bits);
  std::vector<float> out(100, 1.0f);
  add_signs(bits, 150, 0.5f, out);  // entries 150..249: across words 2 and 3
  for (std::size_t j = 0; j < out.size(); ++j) {
    EXPECT_EQ(out[j], v[150 + j] < 0.0f ? 0.5f : 1.5f) << j;
  }
  std::vector<float> past_the_end(200);
  EXPECT_THROW(add_signs(bits, 150, 1.0f, past_the_end), std::invalid_argument);
}

TEST(SignBits, PackRefusesBitsOfAnotherSize) {
  const std::vector<float> v(65, 1.0f);
  std::vector<std::uint64_t> one_word(1);
  EXPECT_THROW(pack_signs(v, one_word), std::invalid_argument);
}

TEST(SignBits, SignInPlaceIsTheVoteWithTiesAtZero) {
  std::vector<float> sums = {3.0f, -1.0f, 0.0f, -0.0f, 2.0f, -4.0f};
  sign_in_place(sums);
  EXPECT_EQ(sums, (std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f, 1.0f, -1.0f}));
}

TEST(SignBits, L1NormIsTheSumOfMagnitudes) {
  const std::vector<float> v = normal_values(1001, 5);  // not a multiple of the lanes
  double expected = 0;
  for (const float x : v) expected += std::fabs(x);
  EXPECT_NEAR(l1_norm(v), expected, 1e-9 * expected);
  EXPECT_EQ(l1_norm(std::vector<float>{}), 0.0);
}

}  // namespace
}  // namespace commsgd::kernels
