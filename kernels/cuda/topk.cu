#include <limits>
#include <stdexcept>

#include "kernels/cuda/selection_core.cuh"
#include "kernels/cuda/topk.hpp"

namespace commsgd::kernels::cuda {

void TopkSelector::select(const float* x, std::size_t n, std::size_t k, DeviceSparseSet& out,
                          cudaStream_t stream) {
  if (k < 1 || k > n) throw std::invalid_argument("cuda top-k select: k outside [1, d]");
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("cuda top-k select: more entries than uint32 indices address");
  }
  out.reserve(k, stream);
  const detail::DenseEntries entries{x};
  detail::radix_select(entries, n, static_cast<std::uint32_t>(k), scratch_, stream);
  detail::count_selected(entries, n, scratch_.bound.data(), scratch_.tiles, stream);
  detail::write_selected(entries, n, scratch_.bound.data(), scratch_.tiles, out, stream);
}

}  // namespace commsgd::kernels::cuda
