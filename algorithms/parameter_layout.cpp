#include <stdexcept>
#include <string>

#include "algorithms/algorithm.hpp"

namespace commsgd::algorithms {

std::size_t layout_entries(std::span<const ParameterLayout> layout, const char* who) {
  std::size_t next = 0;
  for (const ParameterLayout& p : layout) {
    if (p.offset != next) {
      throw std::logic_error(std::string(who) +
                             ": the parameter layout has a gap or overlap at entry " +
                             std::to_string(next));
    }
    next += p.entries();
  }
  return next;
}

}  // namespace commsgd::algorithms
