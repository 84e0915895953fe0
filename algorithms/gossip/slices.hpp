#pragma once

#include <algorithm>
#include <cstddef>

namespace commsgd::algorithms {

// Model-sized gossip traffic (a mixing round's messages, the consensus allreduce) moves in slices
// of at most this many floats, 4 MiB: what arrives is added where it belongs one slice at a time,
// so no algorithm holds a second model-sized buffer to receive into. A slice costs one more
// latency per round; at 4 MiB that is under 2% of the slice's time on a 10 Gb/s link.
inline constexpr std::size_t kSliceFloats = std::size_t{1} << 20;

// Calls visit(offset, count) for the slices of [0, size) in order.
template <class Visit>
void for_each_slice(std::size_t size, std::size_t slice, Visit&& visit) {
  for (std::size_t offset = 0; offset < size; offset += slice) {
    visit(offset, std::min(slice, size - offset));
  }
}

}  // namespace commsgd::algorithms
