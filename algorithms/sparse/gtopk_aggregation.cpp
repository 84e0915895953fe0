#include "algorithms/sparse/gtopk_aggregation.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "kernels/sparse_ops.hpp"

namespace commsgd::algorithms {
namespace {

// alive[i] &= (entries.indices[i] is in survivors); both sorted by index. A two-pointer walk
// with no branch on the comparisons, which random indices would mispredict half the time.
void keep_survivors(const kernels::SparseSet& entries, const kernels::SparseSet& survivors,
                    std::vector<std::uint8_t>& alive) {
  const std::uint32_t* e = entries.indices.data();
  const std::uint32_t* s = survivors.indices.data();
  const std::size_t n = entries.size(), m = survivors.size();
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    const std::uint32_t x = e[i], y = s[j];
    alive[i] &= static_cast<std::uint8_t>(x >= y);  // x < y: x is not among the survivors
    i += x <= y;
    j += y <= x;
  }
  for (; i < n; ++i) alive[i] = 0;
}

}  // namespace

void GtopkAggregation::merge(bool current_is_lower, std::size_t k) {
  if (current_is_lower) {
    kernels::merge_keep_k(current_, other_, k, merged_);
  } else {
    kernels::merge_keep_k(other_, current_, k, merged_);
  }
  std::swap(current_, merged_);
}

void GtopkAggregation::exchange(const kernels::SparseSet& local, std::size_t k,
                                std::vector<std::uint8_t>& applied) {
  const int p = comm_.size();
  const int r = comm_.rank();
  const int group = std::bit_floor(static_cast<unsigned>(p));  // the butterfly's ranks
  const bool is_extra = r >= group;
  const bool has_guest = r + group < p;

  applied.assign(local.size(), 1);
  if (is_extra) {
    // Fold in: hand the selection to the partner; fold out: get U and what of ours survived.
    pack(local, send_);
    comm_.send(send_.data(), send_.size(), r - group);
    comm_.receive(recv_, r - group);
    const std::size_t mask_bytes = local.size();
    unpack(std::span(recv_).first(recv_.size() - mask_bytes), current_);
    std::memcpy(applied.data(), recv_.data() + recv_.size() - mask_bytes, mask_bytes);
  } else {
    current_ = local;
    if (has_guest) {
      comm_.receive(recv_, r + group);
      unpack(recv_, guest_);
      guest_alive_.assign(guest_.size(), 1);
      other_ = guest_;
      merge(/*current_is_lower=*/true, k);
      keep_survivors(local, current_, applied);
      keep_survivors(guest_, current_, guest_alive_);
    }
    for (int distance = 1; distance < group; distance *= 2) {
      const int peer = r ^ distance;
      pack(current_, send_);
      comm_.exchange(send_.data(), send_.size(), peer, recv_);
      unpack(recv_, other_);
      merge(r < peer, k);
      // An entry dropped in any round is not in U, even if the index comes back later with
      // other ranks' values: track survival round by round.
      keep_survivors(local, current_, applied);
      if (has_guest) keep_survivors(guest_, current_, guest_alive_);
    }
    if (has_guest) {
      pack(current_, send_);
      send_.insert(send_.end(), reinterpret_cast<const std::byte*>(guest_alive_.data()),
                   reinterpret_cast<const std::byte*>(guest_alive_.data() + guest_alive_.size()));
      comm_.send(send_.data(), send_.size(), r + group);
    }
  }
}

void GtopkAggregation::write_update(kernels::Buffer<float> update) {
  kernels::ops::fill_zero(update);
  kernels::ops::scatter_add(current_, update, staging_);
}

}  // namespace commsgd::algorithms
