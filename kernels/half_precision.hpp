#pragma once

#include <cstdint>
#include <span>

namespace commsgd::kernels {

// IEEE binary16 and bfloat16 values kept as their bits, for putting gradients on the wire at half
// the bytes (dense --wire-dtype). Conversions from float round to nearest, ties to even; NaN stays
// NaN and out-of-range values become ±Inf, as a hardware conversion does.
std::uint16_t to_fp16(float x);
float from_fp16(std::uint16_t h);
std::uint16_t to_bf16(float x);
float from_bf16(std::uint16_t h);

// Element-wise over spans of equal size.
void to_fp16(std::span<const float> x, std::span<std::uint16_t> out);
void from_fp16(std::span<const std::uint16_t> h, std::span<float> out);
void to_bf16(std::span<const float> x, std::span<std::uint16_t> out);
void from_bf16(std::span<const std::uint16_t> h, std::span<float> out);

// inout[i] = round(inout[i] + in[i]), the sum taken in float: the reduction of a half-precision
// allreduce.
void add_fp16(std::span<const std::uint16_t> in, std::span<std::uint16_t> inout);
void add_bf16(std::span<const std::uint16_t> in, std::span<std::uint16_t> inout);

}  // namespace commsgd::kernels
