#pragma once

#include <vector>

// Which instructions the kernels run on this CPU, for --version and the benchmarks' records.

namespace commsgd::kernels {

// gTop-k's merge (merge_keep_k) has versions of its own for these, chosen at run time: the
// widest the CPU has (AVX-512 F, VL and BW; AVX2), unless the environment caps it:
// COMMSGD_NO_AVX512 set takes AVX2 at most, COMMSGD_NO_AVX2 set the portable loops (which the
// compiler vectorizes for the baseline below). All give the same results, bit for bit.
enum class SimdPath { portable, avx2, avx512 };  // narrowest first
SimdPath merge_simd_path();
const char* name_of(SimdPath path);

// The paths the merge can take here under the environment's cap, narrowest first.
std::vector<SimdPath> merge_simd_paths();

// Makes the merge take `path` from now on, one of merge_simd_paths() (else
// std::invalid_argument): for a benchmark that compares the paths in one process. Not while a
// merge runs on another thread.
void use_merge_simd_path(SimdPath path);

// The vector instructions the compiler was allowed for every other kernel's loops: the build
// target's baseline ("SSE2" on x86-64, "NEON" on aarch64), or "none".
const char* baseline_vector_isa();

}  // namespace commsgd::kernels
