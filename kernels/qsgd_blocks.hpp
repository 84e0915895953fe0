#pragma once

// QSGD's encoding and decoding (kernels/qsgd.hpp), written once and built by qsgd.cpp for each
// instruction set it has a version for (AVX-512 F, AVX2, the portable loops): everything here is
// inline so that it takes on the instructions of the function it lands in. The same operations in
// each, so the same codes and sums.
//
// Both handle a 64-bit word in two 32-bit halves, its low and high bits, so that their loops stay
// in 32-bit lanes, sixteen or eight to an instruction (64-bit lanes would halve that and shift
// slower); a field across bit 32 is in both halves. The encoder builds the words a block of kWidth
// at a time (16, then 8 and 1 for what is left), with the halves in registers, in loops of a fixed
// count; the last field, which only the first n mod W words have, is read with its missing lanes
// masked (the code of 0 in). No loop of a runtime count touches those halves: with one, GCC kept
// them in scalar registers, lane by lane. The decoder goes a field at a time (kChunkWords).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/qsgd.hpp"
#include "kernels/qsgd_draw.hpp"

namespace commsgd::kernels::detail::qsgd {

// The quantities a bucket's loops share. Entry indices are in 32 bits, as the draws take them: a
// 64-bit counter costs the loops shuffles.
struct BucketShape {
  BucketShape(std::size_t entries, std::size_t code_words, unsigned levels, std::uint32_t index)
      : n(entries),
        words(code_words),
        bits(qsgd_code_bits(levels)),
        first(index),
        whole(entries / code_words * code_words) {}
  std::size_t n;        // entries
  std::size_t words;    // W: entry j is in word j mod W, field ⌊j/W⌋
  unsigned bits;        // a code's bits
  std::uint32_t first;  // the first entry's index in the whole vector (mod 2³²)
  std::size_t whole;    // the entries of the whole fields, those every word has
};

// Entry x's code, its level << 1 | its sign (set where negative), i its index in the whole
// vector. The level is ⌊a⌋ or ⌊a⌋ + 1 for a = s·|x|/‖v‖, the larger with probability a − ⌊a⌋.
[[gnu::always_inline]] inline std::uint32_t code_of(float x, std::uint32_t i, std::uint64_t key,
                                                    float to_levels, std::int32_t top) {
  const float a = std::fabs(x) * to_levels;         // in [0, s], up to rounding
  const auto floor = static_cast<std::int32_t>(a);  // a >= 0: truncation is the floor
  const bool up = qsgd_draw::uniform(key, i) < a - static_cast<float>(floor);
  // At most s: |v_i| = ‖v‖ can round to a hair above s, and s + 1 would not fit the field.
  const std::int32_t level = std::min(floor + static_cast<std::int32_t>(up), top);
  return static_cast<std::uint32_t>(level) << 1 | std::bit_cast<std::uint32_t>(x) >> 31;
}

// A code's value: ±level · step, step = scale · ‖v‖ / s. The sign bit is moved onto the float's:
// random signs would mispredict a branch half the time.
[[gnu::always_inline]] inline float value_of(std::uint32_t code, float step) {
  const float magnitude = static_cast<float>(static_cast<std::int32_t>(code >> 1)) * step;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) ^ (code << 31));
}

// Σ v_i² in double, eight running sums so that no addition waits for the one before it.
[[gnu::always_inline]] inline double squared_norm(std::span<const float> v) {
  constexpr std::size_t kLanes = 8;
  double lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= v.size(); i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      lanes[l] += static_cast<double>(v[i + l]) * static_cast<double>(v[i + l]);
    }
  }
  double sum = 0;
  for (; i < v.size(); ++i) sum += static_cast<double>(v[i]) * static_cast<double>(v[i]);
  for (const double lane : lanes) sum += lane;
  return sum;
}

// The codes c of one field, at bits [shift, shift + bits) of a block's words, ORed in.
template <std::size_t kWidth>
[[gnu::always_inline]] inline void or_field(const std::uint32_t (&c)[kWidth], std::size_t shift,
                                            unsigned bits, std::uint32_t (&low)[kWidth],
                                            std::uint32_t (&high)[kWidth]) {
  if (shift + bits <= 32) {
    for (std::size_t l = 0; l < kWidth; ++l) low[l] |= c[l] << shift;
  } else if (shift >= 32) {
    for (std::size_t l = 0; l < kWidth; ++l) high[l] |= c[l] << (shift - 32);
  } else {
    for (std::size_t l = 0; l < kWidth; ++l) {
      low[l] |= c[l] << shift;
      high[l] |= c[l] >> (32 - shift);
    }
  }
}

// Words w0 .. w0 + kWidth − 1 of bucket v's code: entry begin + l of each field is lane l.
template <std::size_t kWidth>
[[gnu::always_inline]] inline void encode_block(std::span<const float> v, const BucketShape& at,
                                                std::size_t w0, std::uint64_t key, float to_levels,
                                                std::int32_t top, std::span<std::uint64_t> code) {
  std::uint32_t low[kWidth] = {}, high[kWidth] = {};
  std::size_t begin = w0, shift = 0;
  for (; begin < at.whole; begin += at.words, shift += at.bits) {
    const float* in = v.data() + begin;
    const std::uint32_t i = at.first + static_cast<std::uint32_t>(begin);
    std::uint32_t c[kWidth];
    for (std::uint32_t l = 0; l < kWidth; ++l) c[l] = code_of(in[l], i + l, key, to_levels, top);
    or_field(c, shift, at.bits, low, high);
  }
  if (begin < at.n) {  // the last field
    const std::uint32_t i = at.first + static_cast<std::uint32_t>(begin);
    std::uint32_t c[kWidth];
    for (std::uint32_t l = 0; l < kWidth; ++l) {
      const float x = begin + l < at.n ? v[begin + l] : 0.0f;
      c[l] = code_of(x, i + l, key, to_levels, top);
    }
    or_field(c, shift, at.bits, low, high);
  }
  for (std::size_t l = 0; l < kWidth; ++l) {
    code[w0 + l] = static_cast<std::uint64_t>(high[l]) << 32 | low[l];
  }
}

// Calls block.template operator()<kWidth>(w0) for blocks covering words 0 .. words − 1: of 16
// words, then one of 8 and single words for what is left. (A block of 4 besides made GCC 12's
// code for all of them slower, measured.)
template <class Block>
[[gnu::always_inline]] inline void for_each_block(std::size_t words, Block block) {
  std::size_t w0 = 0;
  for (; w0 + 16 <= words; w0 += 16) block.template operator()<16>(w0);
  if (w0 + 8 <= words) {
    block.template operator()<8>(w0);
    w0 += 8;
  }
  for (; w0 < words; ++w0) block.template operator()<1>(w0);
}

// Encodes one bucket (entries at.first.. of the whole vector; the caller has checked the sizes)
// and returns its norm.
[[gnu::always_inline]] inline float encode_bucket(std::span<const float> v, unsigned levels,
                                                  std::uint64_t key, std::uint32_t first,
                                                  std::span<std::uint64_t> code) {
  const auto norm = static_cast<float>(std::sqrt(squared_norm(v)));
  if (norm == 0) {
    std::fill(code.begin(), code.end(), 0);
    return 0;
  }
  const BucketShape at(v.size(), code.size(), levels, first);
  const float to_levels = static_cast<float>(levels) / norm;
  const auto top = static_cast<std::int32_t>(levels);
  for_each_block(
      at.words, [&]<std::size_t kWidth>(std::size_t w0) __attribute__((always_inline)) {
        encode_block<kWidth>(v, at, w0, key, to_levels, top, code);
      });
  return norm;
}

// The decoder reads the words a chunk of up to kChunkWords at a time, split into their 32-bit
// halves first, and then goes a field at a time over all of the chunk's words: consecutive
// entries of out, read and written once each. (In blocks of 16 words, as the encoder, a field's
// 16 floats would cross a cache line wherever W is not a multiple of 16, and the decoder, which
// does little arithmetic an entry, would wait on them.)
constexpr std::size_t kChunkWords = 256;

// out += scale · the decoded bucket (the caller has checked the sizes).
[[gnu::always_inline]] inline void decode_add_bucket(std::span<const std::uint64_t> code,
                                                     unsigned levels, float norm, float scale,
                                                     std::span<float> out) {
  const BucketShape at(out.size(), code.size(), levels, 0);
  const float step = scale * norm / static_cast<float>(levels);
  const std::uint32_t mask = (std::uint32_t{1} << at.bits) - 1;
  std::uint32_t low[kChunkWords], high[kChunkWords];
  for (std::size_t w0 = 0; w0 < at.words; w0 += kChunkWords) {
    const std::size_t chunk = std::min(kChunkWords, at.words - w0);
    for (std::size_t w = 0; w < chunk; ++w) {
      low[w] = static_cast<std::uint32_t>(code[w0 + w]);
      high[w] = static_cast<std::uint32_t>(code[w0 + w] >> 32);
    }
    for (std::size_t begin = w0, shift = 0; begin < at.n; begin += at.words, shift += at.bits) {
      const std::size_t count = std::min(chunk, at.n - begin);
      float* to = out.data() + begin;
      if (shift + at.bits <= 32) {
        for (std::size_t w = 0; w < count; ++w) to[w] += value_of((low[w] >> shift) & mask, step);
      } else if (shift >= 32) {
        for (std::size_t w = 0; w < count; ++w) {
          to[w] += value_of((high[w] >> (shift - 32)) & mask, step);
        }
      } else {
        for (std::size_t w = 0; w < count; ++w) {
          to[w] += value_of(((low[w] >> shift) | (high[w] << (32 - shift))) & mask, step);
        }
      }
    }
  }
}

}  // namespace commsgd::kernels::detail::qsgd
