#pragma once

// QSGD's encoding and decoding (kernels/qsgd.hpp), written once and built by qsgd.cpp for each
// instruction set it has a version for (AVX-512 F, AVX2, the portable loops): everything here is
// inline so that it takes on the instructions of the function it lands in. The same operations in
// each, so the same codes and sums.
//
// Both handle a 64-bit word in two 32-bit halves, its low and high bits, so that their work stays
// in 32-bit lanes, sixteen or eight to an instruction (64-bit lanes would halve that and shift
// slower); a field across bit 32 is in both halves. The encoder builds the words a block of 16 at
// a time (for_each_block), the halves and the draws' states of a block in vector registers
// (Lanes); the last field, which only the first n mod W words have, is read with zeros for the
// missing lanes (the code of 0 in). The decoder goes a field at a time (kChunkWords).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// A code's value: ±level · step, step = scale · ‖v‖ / s. The sign bit is moved onto the float's:
// random signs would mispredict a branch half the time.
[[gnu::always_inline]] inline float value_of(std::uint32_t code, float step) {
  const float magnitude = static_cast<float>(static_cast<std::int32_t>(code >> 1)) * step;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) ^ (code << 31));
}

// ‖v‖₂ in floats, in an order fixed so that a GPU warp gives the same bits: lane l of kNormLanes
// sums v_l², v_{l+32}², .. in turn, and the lanes are added in a tree, l and l + 16 first (a warp's
// shuffles). Many running sums, so that no addition waits long for the one before it.
constexpr std::size_t kNormLanes = 32;

[[gnu::always_inline]] inline float norm_of(std::span<const float> v) {
  float lanes[kNormLanes] = {};
  std::size_t i = 0;
  for (; i + kNormLanes <= v.size(); i += kNormLanes) {
    for (std::size_t l = 0; l < kNormLanes; ++l) lanes[l] += v[i + l] * v[i + l];
  }
  for (std::size_t l = 0; i + l < v.size(); ++l) lanes[l] += v[i + l] * v[i + l];
  for (std::size_t half = kNormLanes / 2; half > 0; half /= 2) {
    for (std::size_t l = 0; l < half; ++l) lanes[l] += lanes[l + half];
  }
  return std::sqrt(lanes[0]);
}

// kLanes 32-bit lanes as GCC's vector types, as wide as one register of the instruction set
// the encoder is built for (16 for AVX-512, 8 for AVX2, 4 for SSE2 and NEON): each operation on
// them is one instruction. Written out, because GCC's vectorizer, left to find them in loops over
// the lanes, kept them in scalar registers wherever a block was built from two places (2.5 times
// slower, measured); and no wider than a register, because GCC keeps a vector wider than the
// registers in memory, a piece at a time (4 times slower on AVX2, measured; only the 64-bit words,
// made once a block, take two). Passed by reference: a vector wider than the baseline's
// registers is not passed by value between functions.
template <std::size_t kLanes>
struct Lanes {
  typedef float F32 __attribute__((vector_size(kLanes * 4)));
  typedef std::int32_t I32 __attribute__((vector_size(kLanes * 4)));
  typedef std::uint32_t U32 __attribute__((vector_size(kLanes * 4)));
  typedef std::uint64_t U64 __attribute__((vector_size(kLanes * 8)));
};

// The codes of x, each entry's level << 1 | its sign (set where negative), given the states of
// their draws. The level is ⌊a⌋ or ⌊a⌋ + 1 for a = s·|x|/‖v‖, the larger where the draw is below
// a − ⌊a⌋, and at most s: |v_i| = ‖v‖ can round to a hair above s, and s + 1 would not fit the
// field.
template <std::size_t kLanes>
[[gnu::always_inline]] inline void codes_of(const typename Lanes<kLanes>::F32& x,
                                            const typename Lanes<kLanes>::U32& state,
                                            float to_levels, std::int32_t top,
                                            typename Lanes<kLanes>::U32& code) {
  using L = Lanes<kLanes>;
  const auto bits = __builtin_bit_cast(typename L::U32, x);
  const auto a = __builtin_bit_cast(typename L::F32, bits & 0x7fffffffU) * to_levels;
  const auto floor = __builtin_convertvector(a, typename L::I32);  // a >= 0: the floor
  const auto draw = qsgd_draw::uniform<typename L::F32>(state);
  const auto fraction = a - __builtin_convertvector(floor, typename L::F32);
  const typename L::I32 up = draw < fraction;  // −1 where the level goes up
  const typename L::I32 level = floor - up, tops = typename L::I32{} + top;
  code = __builtin_bit_cast(typename L::U32, level < tops ? level : tops) << 1 | bits >> 31;
}

// The codes of one field, at bits [shift, shift + bits) of the words, ORed in.
template <std::size_t kLanes>
[[gnu::always_inline]] inline void or_field(const typename Lanes<kLanes>::U32& code, unsigned shift,
                                            unsigned bits, typename Lanes<kLanes>::U32& low,
                                            typename Lanes<kLanes>::U32& high) {
  if (shift + bits <= 32) {
    low |= code << shift;
  } else if (shift >= 32) {
    high |= code << (shift - 32);
  } else {
    low |= code << shift;
    high |= code >> (32 - shift);
  }
}

// Words w0 .. w0 + kWidth − 1 of bucket v's code, in registers of at most kRegisterLanes lanes:
// entry begin + l of each field is lane l, and lane l draws from word w0 + l's stream, a step a
// field. Each field's entries are also the place, `ahead` entries on, whose cache line is asked
// for (kernels/qsgd.cpp says why).
template <std::size_t kRegisterLanes, std::size_t kWidth>
[[gnu::always_inline]] inline void encode_block(std::span<const float> v, const BucketShape& at,
                                                std::size_t w0, std::uint64_t key, float to_levels,
                                                std::int32_t top, std::size_t ahead,
                                                std::span<std::uint64_t> code) {
  constexpr std::size_t kLanes = std::min(kWidth, kRegisterLanes), kRegisters = kWidth / kLanes;
  using L = Lanes<kLanes>;
  typename L::U32 low[kRegisters] = {}, high[kRegisters] = {}, state[kRegisters], lane = {}, c;
  typename L::F32 x;
  for (std::uint32_t l = 0; l < kLanes; ++l) lane[l] = l;
  for (std::size_t r = 0; r < kRegisters; ++r) {
    state[r] = qsgd_draw::start(key, lane + static_cast<std::uint32_t>(at.first + w0 + r * kLanes));
  }
  std::size_t begin = w0;
  unsigned shift = 0;
  for (; begin < at.whole; begin += at.words, shift += at.bits) {
    __builtin_prefetch(v.data() + begin + ahead);
    for (std::size_t r = 0; r < kRegisters; ++r) {
      std::memcpy(&x, v.data() + begin + r * kLanes, sizeof x);
      codes_of<kLanes>(x, state[r], to_levels, top, c);
      or_field<kLanes>(c, shift, at.bits, low[r], high[r]);
      state[r] = qsgd_draw::next(state[r]);
    }
  }
  for (std::size_t r = 0; r < kRegisters && begin < at.n; ++r) {  // the last field
    const std::size_t from = begin + r * kLanes;  // the code of 0 where a word has none
    x = typename L::F32{};
    if (from < at.n)
      std::memcpy(&x, v.data() + from, std::min(kLanes, at.n - from) * sizeof(float));
    codes_of<kLanes>(x, state[r], to_levels, top, c);
    or_field<kLanes>(c, shift, at.bits, low[r], high[r]);
  }
  for (std::size_t r = 0; r < kRegisters; ++r) {
    const typename L::U64 words = __builtin_convertvector(high[r], typename L::U64) << 32 |
                                  __builtin_convertvector(low[r], typename L::U64);
    std::memcpy(code.data() + w0 + r * kLanes, &words, sizeof words);
  }
}

// Calls block.template operator()<kWidth>(w0) for blocks covering words 0 .. words − 1: of 16
// words, and for what is left one more of 16 that ends at the last word, so that it builds some
// words again, the same way (each word's code is its own). Fewer than 16 words take blocks of 8
// so, and fewer than 8 single words. (Single words for what is left, which cost many times a
// block's time an entry, were a tenth of the entries at 2 and 16 levels.)
template <class Block>
[[gnu::always_inline]] inline void for_each_block(std::size_t words, Block block) {
  if (words >= 16) {
    for (std::size_t w0 = 0; w0 < words; w0 += 16) {
      block.template operator()<16>(std::min(w0, words - 16));
    }
  } else if (words >= 8) {
    for (std::size_t w0 = 0; w0 < words; w0 += 8)
      block.template operator()<8>(std::min(w0, words - 8));
  } else {
    for (std::size_t w0 = 0; w0 < words; ++w0) block.template operator()<1>(w0);
  }
}

// Encodes one bucket (entries at.first.. of the whole vector; the caller has checked the sizes)
// in registers of kRegisterLanes lanes and returns its norm. v.data() + ahead .. is still in the
// caller's vector: the encoder asks for it on its way.
template <std::size_t kRegisterLanes>
[[gnu::always_inline]] inline float encode_bucket(std::span<const float> v, unsigned levels,
                                                  std::uint64_t key, std::uint32_t first,
                                                  std::size_t ahead,
                                                  std::span<std::uint64_t> code) {
  const float norm = norm_of(v);
  if (norm == 0) {
    std::fill(code.begin(), code.end(), 0);
    return 0;
  }
  const BucketShape at(v.size(), code.size(), levels, first);
  const float to_levels = static_cast<float>(levels) / norm;
  const auto top = static_cast<std::int32_t>(levels);
  for_each_block(
      at.words, [&]<std::size_t kWidth>(std::size_t w0) __attribute__((always_inline)) {
        encode_block<kRegisterLanes, kWidth>(v, at, w0, key, to_levels, top, ahead, code);
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
