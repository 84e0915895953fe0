#pragma once

// An algorithm's values in kernels::ops::Storage, which lives where the gradient is (host or
// device memory): set to zeros, and carried through a checkpoint. A checkpoint reads them back
// into host memory; the algorithm's next step moves them where the gradient is.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/state.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// `size` zeros in `place`.
inline void assign_zeros(kernels::ops::Storage<float>& values, std::size_t size,
                         kernels::Place place) {
  values.resize(size, place);
  kernels::ops::fill_zero(values.buffer());
}

// Writes `values` from wherever they are (a device's through a host copy).
inline void write_values(StateWriter& out, Buffer<const float> values) {
  if (values.on_host()) return out.write(values.host("checkpoint"));
  std::vector<float> copy(values.size());
  kernels::ops::copy_to_host(values, copy);
  out.write(std::span<const float>(copy));
}

// Reads values write_values wrote into `into`, in host memory: `size` of them where given
// (std::runtime_error for another length), else as many as were written.
inline void read_values(StateReader& in, kernels::ops::Storage<float>& into,
                        std::optional<std::size_t> size = std::nullopt) {
  std::vector<float> values(size.value_or(0));
  if (size) {
    in.read(std::span<float>(values));
  } else {
    in.read(values);
  }
  into.resize(values.size(), kernels::kHost);
  kernels::ops::copy_from_host(values, into.buffer());
}

}  // namespace commsgd::algorithms
