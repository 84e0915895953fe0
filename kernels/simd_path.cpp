#include "kernels/simd_path.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/merge_blocks.hpp"

namespace commsgd::kernels {

SimdPath widest_simd_path(Avx512Subset subset) {
#if defined(__x86_64__)
  if (std::getenv("COMMSGD_NO_AVX2") != nullptr) return SimdPath::portable;
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      (subset == Avx512Subset::f ||
                       (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")));
  if (std::getenv("COMMSGD_NO_AVX512") == nullptr && avx512) return SimdPath::avx512;
  if (__builtin_cpu_supports("avx2")) return SimdPath::avx2;
#else
  static_cast<void>(subset);
#endif
  return SimdPath::portable;
}

std::vector<SimdPath> simd_paths_up_to(SimdPath widest) {
  std::vector<SimdPath> paths;
  for (const SimdPath path : {SimdPath::portable, SimdPath::avx2, SimdPath::avx512}) {
    if (path <= widest) paths.push_back(path);
  }
  return paths;
}

void check_simd_path_available(SimdPath path, SimdPath widest, const char* who) {
  if (path > widest) {
    throw std::invalid_argument(std::string(who) + ": " + name_of(path) +
                                " is not available on this CPU under this environment");
  }
}

namespace {

// The merge's paths also count bits (popcnt).
SimdPath widest_merge_path() {
#if defined(__x86_64__)
  const SimdPath widest = widest_simd_path(Avx512Subset::f_vl_bw);
  __builtin_cpu_init();
  return __builtin_cpu_supports("popcnt") ? widest : SimdPath::portable;
#else
  return SimdPath::portable;
#endif
}

// Decided once, at the first merge, unless a benchmark switches it.
std::atomic<SimdPath>& current_path() {
  static std::atomic<SimdPath> path{widest_merge_path()};
  return path;
}

}  // namespace

SimdPath merge_simd_path() {
  return current_path().load(std::memory_order_relaxed);
}

std::vector<SimdPath> merge_simd_paths() {
  return simd_paths_up_to(widest_merge_path());
}

void use_merge_simd_path(SimdPath path) {
  check_simd_path_available(path, widest_merge_path(), "use_merge_simd_path");
  current_path().store(path, std::memory_order_relaxed);
}

const char* name_of(SimdPath path) {
  switch (path) {
    case SimdPath::avx512:
      return "AVX-512";
    case SimdPath::avx2:
      return "AVX2";
    case SimdPath::portable:
      break;
  }
  return "portable";
}

const char* baseline_vector_isa() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__)
  return "AVX2";
#elif defined(__SSE2__)
  return "SSE2";
#elif defined(__ARM_NEON)
  return "NEON";
#else
  return "none";
#endif
}

namespace detail {

const MergeBlocks* merge_blocks() {
  switch (merge_simd_path()) {
#if defined(__x86_64__)
    case SimdPath::avx512:
      return &kAvx512MergeBlocks;
    case SimdPath::avx2:
      return &kAvx2MergeBlocks;
#endif
    default:
      return nullptr;
  }
}

}  // namespace detail
}  // namespace commsgd::kernels
