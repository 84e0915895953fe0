#pragma once

#include <cstdint>
#include <string_view>

namespace commsgd {

// FNV-1a: the same across processes, builds and machines, unlike std::hash. For what ranks and
// runs compare: the computation hash a resume checks, the model structure every rank must share,
// a configuration's short name in the reports.
inline std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace commsgd
