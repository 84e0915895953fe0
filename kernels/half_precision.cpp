#include "kernels/half_precision.hpp"

#include <bit>
#include <cassert>
#include <cstddef>

namespace commsgd::kernels {
namespace {

constexpr std::uint32_t kFloatAbs = 0x7FFF'FFFFu;
constexpr std::uint32_t kFloatInf = 0x7F80'0000u;
// binary16 keeps 10 of float's 23 mantissa bits and has exponent bias 15 against float's 127.
constexpr int kDroppedBits = 13;
constexpr std::uint32_t kRebias = (127u - 15u) << 23;
// The smallest float that rounds to the half Inf: halfway between 65504 (the largest half, whose
// mantissa is odd) and 65536, a tie that rounds to the even neighbour, Inf.
constexpr std::uint32_t kFirstOverflow = 0x477F'F000u;
constexpr std::uint32_t kSmallestNormalHalf = 0x3880'0000u;  // 2^-14 as a float

}  // namespace

std::uint16_t to_fp16(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & kFloatAbs;
  if (magnitude > kFloatInf) return sign | 0x7E00u;  // a quiet NaN
  if (magnitude >= kFirstOverflow) return sign | 0x7C00u;
  if (magnitude < kSmallestNormalHalf) {
    // Subnormal halves are multiples of 2^-24, which is also the spacing of floats in [0.5, 1):
    // adding 0.5 lets the FPU do the rounding, and what lies above 0.5 is the half's bits (1024
    // when it rounded up to the smallest normal half, which is that half's encoding too).
    const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
    return sign | static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(shifted) -
                                             std::bit_cast<std::uint32_t>(0.5f));
  }
  const std::uint32_t odd = (magnitude >> kDroppedBits) & 1u;
  const std::uint32_t rounded = magnitude - kRebias + ((1u << (kDroppedBits - 1)) - 1u) + odd;
  return sign | static_cast<std::uint16_t>(rounded >> kDroppedBits);
}

float from_fp16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return std::bit_cast<float>(sign | kFloatInf | (mantissa << kDroppedBits));
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact: mantissa < 2^10
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent << 23) + kRebias) | (mantissa << kDroppedBits));
}

std::uint16_t to_bf16(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & kFloatAbs) > kFloatInf) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  // bfloat16 is float's upper half; a carry out of the mantissa correctly bumps the exponent
  // (up to Inf).
  const std::uint32_t odd = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7FFFu + odd) >> 16);
}

float from_bf16(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

namespace {

template <class Convert>
void convert_each(const auto& in, auto& out, Convert convert) {
  assert(in.size() == out.size());
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n; ++i) out[i] = convert(in[i]);
}

}  // namespace

void to_fp16(std::span<const float> x, std::span<std::uint16_t> out) {
  convert_each(x, out, [](float v) { return to_fp16(v); });
}

void from_fp16(std::span<const std::uint16_t> h, std::span<float> out) {
  convert_each(h, out, [](std::uint16_t v) { return from_fp16(v); });
}

void to_bf16(std::span<const float> x, std::span<std::uint16_t> out) {
  convert_each(x, out, [](float v) { return to_bf16(v); });
}

void from_bf16(std::span<const std::uint16_t> h, std::span<float> out) {
  convert_each(h, out, [](std::uint16_t v) { return from_bf16(v); });
}

void add_fp16(std::span<const std::uint16_t> in, std::span<std::uint16_t> inout) {
  assert(in.size() == inout.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    inout[i] = to_fp16(from_fp16(in[i]) + from_fp16(inout[i]));
  }
}

void add_bf16(std::span<const std::uint16_t> in, std::span<std::uint16_t> inout) {
  assert(in.size() == inout.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    inout[i] = to_bf16(from_bf16(in[i]) + from_bf16(inout[i]));
  }
}

}  // namespace commsgd::kernels
