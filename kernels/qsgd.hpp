#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/simd_path.hpp"

namespace commsgd::kernels {

// QSGD's stochastic quantization (Alistarh et al., NeurIPS 2017, Section 3.1) of a bucket v of n
// entries to s levels: entry i becomes ‖v‖₂ · sign(v_i) · ℓ_i / s, where ℓ_i is ⌊s·|v_i|/‖v‖₂⌋ or
// one more, the larger with probability s·|v_i|/‖v‖₂ − ⌊s·|v_i|/‖v‖₂⌋, so that E[Q(v)] = v.
// Each entry travels as its level and a sign bit (set where negative), `qsgd_code_bits(s)` bits,
// `qsgd_codes_per_word(s)` to a 64-bit word (none straddles two words); the bucket's norm travels
// beside it as a float.
//
// The codes are laid out by field, not by word: a bucket of W = qsgd_words(n, s) words holds
// entry j in word j mod W, at bits [b·⌊j/W⌋, b·⌊j/W⌋ + b) (b the code's bits). So W consecutive
// entries share one shift, and encoding and decoding are loops over consecutive entries and words
// with that one shift, which the compiler vectorizes (and a GPU thread a word reads its entries
// W apart, coalesced across threads).
//
// The random numbers (kernels/qsgd_draw.hpp) are a function of the key and the entry's place
// alone: word w of a bucket draws for its fields in turn from a stream that starts from the key
// and the index of the word's first entry in the whole vector (`first` + w, taken modulo 2³²). A
// rank that draws with the same key again gets the same code, and nothing but the key needs
// keeping between steps.
//
// The norm is summed in floats in a fixed order (kernels/qsgd_blocks.hpp), so that every
// instruction set and the GPU give the same bits. Squares below about 1e-38 (|v_i| below about
// 1e-19) are subnormal and lose precision, and a bucket whose squares all round to 0 (every |v_i|
// below about 2.6e-23) has norm 0 and encodes as zeros.
constexpr unsigned qsgd_code_bits(unsigned levels) {  // 1 + the bits of s
  unsigned bits = 1;
  for (unsigned s = levels; s > 0; s >>= 1) ++bits;
  return bits;
}
constexpr std::size_t qsgd_codes_per_word(unsigned levels) {
  return 64 / qsgd_code_bits(levels);
}
constexpr std::size_t qsgd_words(std::size_t entries, unsigned levels) {
  return (entries + qsgd_codes_per_word(levels) - 1) / qsgd_codes_per_word(levels);
}

// The key of one stream of draws (a rank's at one step, say) under a run's seed.
std::uint64_t qsgd_key(std::uint64_t seed, std::uint64_t stream);

// Encodes v (entries first.. of the whole vector) into qsgd_words(v.size(), levels) words;
// returns ‖v‖₂. A bucket of norm 0 encodes as all zeros. levels >= 1.
float qsgd_encode(std::span<const float> v, unsigned levels, std::uint64_t key, std::size_t first,
                  std::span<std::uint64_t> code);

// out[j] += scale · norm · sign_j · ℓ_j / s for j < out.size(): a bucket decoded and added.
void qsgd_decode_add(std::span<const std::uint64_t> code, unsigned levels, float norm, float scale,
                     std::span<float> out);

// A whole vector in buckets of `bucket` entries (the last one shorter where the size is not a
// multiple): bucket b is entries b·bucket .., its words from b·qsgd_words(bucket, levels) on.
// The words of a vector of n entries; throws std::invalid_argument for a bucket of 0 entries or
// levels outside 1 .. 2^30 − 1.
std::size_t qsgd_code_words(std::size_t n, std::size_t bucket, unsigned levels);
// Throws std::invalid_argument unless a code of `words` words and `norms` norms fit n entries:
// qsgd_code_words(n, bucket, levels) words and one norm a bucket.
void check_qsgd_sizes(std::size_t n, std::size_t bucket, unsigned levels, std::size_t words,
                      std::size_t norms);
// Encodes every bucket, bucket b with first = b·bucket, its norm into norms[b];
// code.size() == qsgd_code_words(v.size(), bucket, levels), norms.size() == the buckets.
void qsgd_encode_buckets(std::span<const float> v, std::size_t bucket, unsigned levels,
                         std::uint64_t key, std::span<std::uint64_t> code, std::span<float> norms);
// Decodes every bucket of such a code and adds scale times it to out.
void qsgd_decode_add_buckets(std::span<const std::uint64_t> code, std::span<const float> norms,
                             std::size_t bucket, unsigned levels, float scale,
                             std::span<float> out);

// The encoder's and decoder's versions (kernels/simd_path.hpp): AVX-512 F, AVX2 and the portable
// loops, the same codes and sums from each. The ones this CPU has under the environment's cap
// (COMMSGD_NO_AVX512, COMMSGD_NO_AVX2), narrowest first; the one both take, the widest unless
// switched; and the switch, for the test that all agree and the benchmark that times each (not
// while a code is made or read on another thread; std::invalid_argument for a path not
// available).
std::vector<SimdPath> qsgd_simd_paths();
SimdPath qsgd_simd_path();
void use_qsgd_simd_path(SimdPath path);

}  // namespace commsgd::kernels
