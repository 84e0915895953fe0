#pragma once

// QSGD's random draws (kernels/qsgd.hpp), shared by the host's encoder and the device's
// (kernels/cuda/qsgd.cu), which must draw the same numbers to give the same code: integer
// operations and one exact subtraction, so both compilers give the same bits.
//
// Each word of a code draws for its entries (one a field) from a stream of its own: a 32-bit
// linear congruential generator, started from a hash of the key and the index of the word's first
// entry. The multiply-add is the cheapest step that keeps every draw exactly uniform: it is a
// bijection of the 32-bit states, so a start uniform over the keys gives a uniform state at every
// step. Hashing every entry instead (two multiplies and three shifts) was a third of the
// encoder's time, measured; the words' streams are as far apart as the hash makes their starts,
// and a stream is as long as a word has fields (at most 32).

#include <cstdint>

#if defined(__CUDACC__)
#define COMMSGD_DRAW_INLINE __host__ __device__ __forceinline__
#else
// Inlined always: a vector's operations then take the instructions of the function they land in.
#define COMMSGD_DRAW_INLINE [[gnu::always_inline]] inline
#endif

namespace commsgd::kernels::qsgd_draw {

// Each function takes a 32-bit value or, on the host, a GCC vector of them (kernels/qsgd_blocks.hpp
// draws for a block of words at once), the same operations lane by lane.

// A 32-bit bijection in which every output bit depends on every input bit (the "lowbias32"
// constants of Wellons' hash search).
template <class U>
COMMSGD_DRAW_INLINE U mix32(U x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// The state of the stream of the word whose first entry is entry i of the whole vector, under
// `key`. Over a key drawn at random it is exactly uniform (i + the low half is); the high half
// mixed in after keeps two keys' streams from being shifts of one another.
template <class U>
COMMSGD_DRAW_INLINE U start(std::uint64_t key, U i) {
  return mix32(i + static_cast<std::uint32_t>(key)) ^ static_cast<std::uint32_t>(key >> 32);
}

// The state after `state`: the 32-bit multiplier and increment of O'Neill's PCG
// (PCG_DEFAULT_MULTIPLIER_32, PCG_DEFAULT_INCREMENT_32), full period.
template <class U>
COMMSGD_DRAW_INLINE U next(U state) {
  return state * 747796405U + 2891336453U;
}

// The draw of a state, uniform in [0, 1): its 23 high bits (an LCG's best) as the mantissa of a
// float in [1, 2), less one, which is exact. F is float, or on the host the GCC vector of floats
// as wide as U.
template <class F = float, class U>
COMMSGD_DRAW_INLINE F uniform(U state) {
  const U one_to_two = state >> 9 | 0x3f800000U;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(one_to_two) - 1.0f;
#else
  return __builtin_bit_cast(F, one_to_two) - 1.0f;
#endif
}

}  // namespace commsgd::kernels::qsgd_draw

#undef COMMSGD_DRAW_INLINE
