#pragma once

// QSGD's random draws (kernels/qsgd.hpp), shared by the host's encoder and the device's
// (kernels/cuda/qsgd.cu), which must draw the same numbers to give the same code: integer
// operations and one exact multiply, so both compilers give the same bits.

#include <cstdint>

#if defined(__CUDACC__)
#define COMMSGD_HOST_DEVICE __host__ __device__
#else
#define COMMSGD_HOST_DEVICE
#endif

namespace commsgd::kernels::qsgd_draw {

// A 32-bit bijection in which every output bit depends on every input bit (the "lowbias32"
// constants of Wellons' hash search): the draws, in 32-bit lanes the compiler vectorizes.
COMMSGD_HOST_DEVICE inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// A uniform draw in [0, 1) for entry i under `key`: 24 bits, a float's mantissa. One round of the
// hash: over a key drawn at random every entry's draw is exactly uniform (i + low half is), and
// the high half mixed in after keeps two keys' streams from being shifts of one another. (A
// second round cost the encoding about half again, measured.)
COMMSGD_HOST_DEVICE inline float uniform(std::uint64_t key, std::uint32_t i) {
  const std::uint32_t bits =
      mix32(i + static_cast<std::uint32_t>(key)) ^ static_cast<std::uint32_t>(key >> 32);
  return static_cast<float>(static_cast<std::int32_t>(bits >> 8)) * 0x1.0p-24f;
}

}  // namespace commsgd::kernels::qsgd_draw

#undef COMMSGD_HOST_DEVICE
