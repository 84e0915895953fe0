// QSGD's quantization (kernels/qsgd.hpp): the code carries every sign and level back exactly
// where the levels are exact, and over many draws the quantization is unbiased and within the
// paper's variance bound (Alistarh et al. 2017, Lemma 3.1), with fixed keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/qsgd.hpp"
#include "kernels/qsgd_draw.hpp"
#include "kernels/simd_path.hpp"
#include "tests/support/normal_values.hpp"

namespace commsgd::kernels {
namespace {

std::vector<float> decoded(std::span<const float> v, unsigned levels, std::uint64_t key) {
  std::vector<std::uint64_t> code(qsgd_words(v.size(), levels));
  const float norm = qsgd_encode(v, levels, key, 0, code);
  std::vector<float> out(v.size(), 0.0f);
  qsgd_decode_add(code, levels, norm, 1.0f, out);
  return out;
}

TEST(Qsgd, CodeWidths) {
  EXPECT_EQ(qsgd_code_bits(1), 2u);  // levels 0..1 and a sign
  EXPECT_EQ(qsgd_code_bits(4), 4u);  // 0..4 in 3 bits
  EXPECT_EQ(qsgd_code_bits(255), 9u);
  EXPECT_EQ(qsgd_codes_per_word(4), 16u);
  EXPECT_EQ(qsgd_codes_per_word(16), 10u);  // 6 bits: 4 left over in each word
  EXPECT_EQ(qsgd_words(512, 4), 32u);
  EXPECT_EQ(qsgd_words(21, 16), 3u);
}

// ‖v‖ = 16 and s = 16, so s·|v_i|/‖v‖ = |v_i|: every level is exact, no draw decides it, and the
// decoded vector is v itself, every sign and level, across the 6-bit codes' words.
TEST(Qsgd, PackThenUnpackGivesEverySignAndLevelBack) {
  std::vector<float> v(130, 0.0f);
  std::mt19937 rng(5);
  std::size_t at = 0;
  for (const auto& [magnitude, count] : {std::pair{4.0f, 8}, {2.0f, 16}, {1.0f, 64}}) {
    for (int i = 0; i < count; ++i) v[at++] = rng() % 2 == 0 ? magnitude : -magnitude;
  }
  std::shuffle(v.begin(), v.end(), rng);
  for (const std::uint64_t key : {1u, 2u, 3u}) {
    const std::vector<float> back = decoded(v, 16, key);
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(back[i], v[i]) << i;
    }
  }
}

TEST(Qsgd, ABucketOfZerosEncodesAsZeros) {
  const std::vector<float> zeros(40, 0.0f);
  EXPECT_EQ(decoded(zeros, 4, 9), zeros);
}

// Over 4000 draws of a normal bucket of 512 entries: each entry's mean within 5 standard errors
// of v_i (a level's draw has variance at most 1/4, in units of ‖v‖/s), and the mean squared
// error ‖Q(v) − v‖² within min(n/s², √n/s)·‖v‖².
TEST(Qsgd, UnbiasedAndWithinThePapersVarianceBound) {
  constexpr std::size_t kN = 512;
  constexpr int kDraws = 4000;
  for (const unsigned levels : {1u, 4u, 15u}) {
    const std::vector<float> v = testing::normal_values(kN, 11);
    double squared_norm = 0;
    for (const float x : v) squared_norm += double{x} * x;
    std::vector<double> sum(kN, 0.0);
    double squared_error = 0;
    for (int draw = 0; draw < kDraws; ++draw) {
      const std::vector<float> q =
          decoded(v, levels, qsgd_key(3, static_cast<std::uint64_t>(draw)));
      for (std::size_t i = 0; i < kN; ++i) {
        sum[i] += q[i];
        squared_error += (double{q[i]} - v[i]) * (double{q[i]} - v[i]);
      }
    }
    const double level = std::sqrt(squared_norm) / levels;
    const double tolerance = 5 * level * 0.5 / std::sqrt(double{kDraws});
    for (std::size_t i = 0; i < kN; ++i) {
      ASSERT_NEAR(sum[i] / kDraws, v[i], tolerance) << "levels " << levels << ", entry " << i;
    }
    const double bound =
        std::min(double{kN} / (levels * levels), std::sqrt(double{kN}) / levels) * squared_norm;
    EXPECT_LT(squared_error / kDraws, bound) << "levels " << levels;
  }
}

// The layout by field: a bucket of 21 entries at 16 levels (6-bit codes, 10 to a word) is 3
// words, entry j in word j mod 3 at bits 6·⌊j/3⌋; one entry of level 16 at a time shows where.
TEST(Qsgd, EntryJIsInWordJModWAtFieldJOverW) {
  for (std::size_t j = 0; j < 21; ++j) {
    std::vector<float> v(21, 0.0f);
    v[j] = -1.0f;  // ‖v‖ = 1: level s exactly, sign set
    std::vector<std::uint64_t> code(qsgd_words(v.size(), 16));
    ASSERT_EQ(code.size(), 3u);
    qsgd_encode(v, 16, 7, 0, code);
    for (std::size_t w = 0; w < code.size(); ++w) {
      const std::uint64_t expected = w == j % 3 ? std::uint64_t{16 << 1 | 1} << (6 * (j / 3)) : 0;
      EXPECT_EQ(code[w], expected) << "entry " << j << ", word " << w;
    }
  }
}

// A bucket with one nonzero entry has s·|v_i|/‖v‖ = s up to rounding, and for some values the
// product rounds up a unit in the last place: at s = 2²⁰ − 1 that unit is 1/16, so about one
// draw in 16 would give level s + 1, which does not fit the field and would wipe the entry. The
// level stays at most s: every key decodes v back.
TEST(Qsgd, ALevelNeverPassesS) {
  constexpr unsigned kLevels = (1u << 20) - 1;  // 21-bit codes: 20 for the level
  const auto s = static_cast<float>(kLevels);
  float x = 1.0f;
  while (x * (s / x) <= s) x = std::nextafter(x, 2.0f);  // the first x whose product rounds up
  ASSERT_LT(x, 2.0f);
  for (const float value : {x, -x}) {
    for (std::uint64_t key = 0; key < 256; ++key) {
      const std::vector<float> back = decoded(std::vector<float>{value}, kLevels, key);
      ASSERT_NEAR(back[0], value, 1e-6f * x) << "key " << key;
    }
  }
}

// The norm as the encoder defines it: lane l of 32 sums v_l², v_{l+32}², .. in float, in turn,
// and the lanes are added in a tree, l and l + 16 first.
float norm_by_definition(std::span<const float> v) {
  std::vector<float> lanes(32, 0.0f);
  for (std::size_t j = 0; j < v.size(); ++j) lanes[j % 32] += v[j] * v[j];
  for (std::size_t half = 16; half > 0; half /= 2) {
    for (std::size_t l = 0; l < half; ++l) lanes[l] += lanes[l + half];
  }
  return std::sqrt(lanes[0]);
}

// The code as the header defines it, written out entry by entry: entry j's level (⌊a⌋, or ⌊a⌋ + 1
// where its draw is below a − ⌊a⌋, a = s·|v_j|/norm, at most s) and sign, in word w = j mod W at
// bits b·⌊j/W⌋; its draw is the ⌊j/W⌋-th of word w's stream, which starts at entry first + w.
std::vector<std::uint64_t> code_by_definition(std::span<const float> v, unsigned levels,
                                              std::uint64_t key, std::size_t first, float norm) {
  std::vector<std::uint64_t> code(qsgd_words(v.size(), levels), 0);
  const float to_levels = static_cast<float>(levels) / norm;
  for (std::size_t j = 0; j < v.size(); ++j) {
    const std::size_t word = j % code.size(), field = j / code.size();
    std::uint32_t state = qsgd_draw::start(key, static_cast<std::uint32_t>(first + word));
    for (std::size_t f = 0; f < field; ++f) state = qsgd_draw::next(state);
    const float a = std::fabs(v[j]) * to_levels;
    const auto floor = static_cast<std::uint64_t>(a);
    const bool up = qsgd_draw::uniform(state) < a - static_cast<float>(floor);
    const std::uint64_t level = std::min<std::uint64_t>(floor + (up ? 1 : 0), levels);
    const std::uint64_t sign = std::signbit(v[j]) ? 1 : 0;
    code[word] |= (level << 1 | sign) << (qsgd_code_bits(levels) * field);
  }
  return code;
}

// Entry j's value in a code as the header defines it: ±scale · norm · ℓ_j / s, added to out[j].
std::vector<float> decoded_by_definition(std::span<const std::uint64_t> code, unsigned levels,
                                         float norm, float scale, std::vector<float> out) {
  const unsigned bits = qsgd_code_bits(levels);
  const float step = scale * norm / static_cast<float>(levels);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::uint64_t field = code[j % code.size()] >> (bits * (j / code.size()));
    const float magnitude = static_cast<float>((field & ((1u << bits) - 1)) >> 1) * step;
    out[j] += (field & 1) != 0 ? -magnitude : magnitude;
  }
  return out;
}

// Every instruction set the encoder and decoder have here gives the defined code and values:
// widths whose fields cross bit 32 (3, 6 and 11 bits) and ones that do not, buckets of fewer
// words than 8, of 8 to 16 and of many, of a multiple of the block and not (the last block
// overlaps the one before), and buckets whose last field only some words have.
TEST(Qsgd, EveryInstructionSetGivesTheCodeAndValuesAsDefined) {
  const SimdPath before = qsgd_simd_path();
  for (const SimdPath path : qsgd_simd_paths()) {
    use_qsgd_simd_path(path);
    for (const unsigned levels : {1u, 2u, 4u, 16u, 1000u}) {
      for (const std::size_t n : {37u, 200u, 512u, 1000u, 4097u, 8192u}) {
        const std::vector<float> v = testing::normal_values(n, static_cast<unsigned>(levels + n));
        const std::uint64_t key = qsgd_key(levels, n);
        const std::size_t first = 3 * n;
        std::vector<std::uint64_t> code(qsgd_words(n, levels));
        const float norm = qsgd_encode(v, levels, key, first, code);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(norm),
                  std::bit_cast<std::uint32_t>(norm_by_definition(v)))
            << name_of(path) << ", " << n << " entries";
        double sum = 0;
        for (const float x : v) sum += static_cast<double>(x) * x;
        EXPECT_NEAR(norm, std::sqrt(sum), 1e-6 * std::sqrt(sum));
        EXPECT_EQ(code, code_by_definition(v, levels, key, first, norm))
            << name_of(path) << ", " << levels << " levels, " << n << " entries";
        std::vector<float> out(n, 0.5f);
        qsgd_decode_add(code, levels, norm, 0.25f, out);
        EXPECT_EQ(out,
                  decoded_by_definition(code, levels, norm, 0.25f, std::vector<float>(n, 0.5f)))
            << name_of(path) << ", " << levels << " levels, " << n << " entries";
      }
    }
  }
  use_qsgd_simd_path(before);
  if (qsgd_simd_paths().back() != SimdPath::avx512) {
    EXPECT_THROW(use_qsgd_simd_path(SimdPath::avx512), std::invalid_argument);
  }
}

// The draws over 2^16 keys, as a rank's over its steps: each word's first draw and its next are
// uniform (mean 1/2, variance 1/12, within 5 standard errors) and uncorrelated with each other
// and with the neighbouring word's first (correlation within 5/√N).
TEST(QsgdDraw, AStreamsDrawsAreUniformAndUncorrelated) {
  constexpr int kKeys = 1 << 16;
  double sum[3] = {}, squares[3] = {}, first_next = 0, first_neighbour = 0;
  for (int k = 0; k < kKeys; ++k) {
    const std::uint64_t key = qsgd_key(5, static_cast<std::uint64_t>(k));
    const std::uint32_t state = qsgd_draw::start(key, std::uint32_t{1000});
    const double u[3] = {qsgd_draw::uniform(state), qsgd_draw::uniform(qsgd_draw::next(state)),
                         qsgd_draw::uniform(qsgd_draw::start(key, std::uint32_t{1001}))};
    for (int d = 0; d < 3; ++d) {
      sum[d] += u[d];
      squares[d] += u[d] * u[d];
    }
    first_next += (u[0] - 0.5) * (u[1] - 0.5);
    first_neighbour += (u[0] - 0.5) * (u[2] - 0.5);
  }
  const double n = kKeys, error = 5 / std::sqrt(n);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(sum[d] / n, 0.5, error * std::sqrt(1.0 / 12)) << "draw " << d;
    EXPECT_NEAR(squares[d] / n - (sum[d] / n) * (sum[d] / n), 1.0 / 12, error / 12) << "draw " << d;
  }
  EXPECT_NEAR(first_next / n * 12, 0, error);
  EXPECT_NEAR(first_neighbour / n * 12, 0, error);
}

TEST(Qsgd, RefusesNoLevelsAndACodeOfAnotherSize) {
  std::vector<float> v(10, 1.0f);
  std::vector<std::uint64_t> code(1);
  EXPECT_THROW(qsgd_encode(v, 0, 1, 0, code), std::invalid_argument);
  std::vector<std::uint64_t> short_code(0);
  EXPECT_THROW(qsgd_encode(v, 4, 1, 0, short_code), std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::kernels
