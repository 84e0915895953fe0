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

// Shared by the kernels with paths of their own (the merge above; QSGD's codes, qsgd.hpp):
// the widest path the CPU has under the environment's cap, where the AVX-512 path needs `subset`;
// the paths up to `widest`, narrowest first; and std::invalid_argument naming `who` unless
// `path` is one of them.
enum class Avx512Subset { f, f_vl_bw };
SimdPath widest_simd_path(Avx512Subset subset);
std::vector<SimdPath> simd_paths_up_to(SimdPath widest);
void check_simd_path_available(SimdPath path, SimdPath widest, const char* who);

// The vector instructions the compiler was allowed for every other kernel's loops: the build
// target's baseline ("SSE2" on x86-64, "NEON" on aarch64), or "none".
const char* baseline_vector_isa();

}  // namespace commsgd::kernels
