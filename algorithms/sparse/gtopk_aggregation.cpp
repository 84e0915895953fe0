#include "algorithms/sparse/gtopk_aggregation.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <span>

#include "kernels/sparse_ops.hpp"

namespace commsgd::algorithms {
namespace {

// alive[i] &= (entries[i] is in survivors); both sorted. A two-pointer walk with no branch on the
// comparisons, which random indices would mispredict half the time.
void keep_survivors(std::span<const std::uint32_t> entries,
                    std::span<const std::uint32_t> survivors, std::vector<std::uint8_t>& alive) {
  const std::uint32_t* e = entries.data();
  const std::uint32_t* s = survivors.data();
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

void GtopkAggregation::exchange(const kernels::SparseSet& local, std::size_t k,
                                std::vector<std::uint8_t>& applied) {
  const int p = comm_.size();
  const int r = comm_.rank();
  const int group = std::bit_floor(static_cast<unsigned>(p));  // the butterfly's ranks
  const bool is_extra = r >= group;
  const bool has_guest = r + group < p;

  if (is_extra) {
    // Fold in: hand the selection to the partner; fold out: get U and what of ours survived.
    pack(local, send_);
    comm_.send(send_.data(), send_.size(), r - group);
    comm_.receive(recv_, r - group);
    const std::size_t mask_bytes = local.size();
    applied.resize(mask_bytes);
    unpack(std::span(recv_).first(recv_.size() - mask_bytes), current_);
    std::memcpy(applied.data(), recv_.data() + recv_.size() - mask_bytes, mask_bytes);
    return;
  }

  // The butterfly starts from this rank's own entries: its selection, or, with a guest, the
  // merge of both. Each carries its position there as a tag through the merges; an entry
  // dropped in a round loses it for good, even if its index comes back later with other ranks'
  // values, so a tag that reaches U marks an entry that survived every round.
  const kernels::SparseSet* own = &local;
  if (has_guest) {
    comm_.receive(recv_, r + group);
    unpack(recv_, guest_);
    kernels::merge_keep_k(local, guest_, k, first_);
    own = &first_;
  }
  // The first round's tags are the positions 0, 1, 2, ...: kept from call to call, like the
  // partners' kUntagged, so that no call writes them again (100 kB at k = 25 000).
  if (const std::size_t known = positions_.size(); known < own->size()) {
    positions_.resize(own->size());
    std::iota(positions_.begin() + static_cast<std::ptrdiff_t>(known), positions_.end(),
              static_cast<std::uint32_t>(known));
  }
  std::span<const std::uint32_t> own_tags = std::span(positions_).first(own->size());
  // Which entries of the last round's own set are in U. With one round or none that set is the
  // one the butterfly started from, so these marks are its survival, written where it goes.
  std::vector<std::uint8_t>& survived = has_guest ? survived_ : applied;
  std::vector<std::uint8_t>& own_in_u = group <= 2 ? survived : own_in_u_;
  if (group == 1) {  // one rank alone: U is its own set
    current_ = *own;
    own_in_u.assign(own->size(), 1);
  }
  const bool in_parts = 8 * k >= parts_from_bytes_;
  for (int distance = 1; distance < group; distance *= 2) {
    const int peer = r ^ distance;
    if (in_parts) {
      comm_.exchange(wire_parts(*own), peer, recv_);
    } else {
      pack(*own, send_);
      comm_.exchange(send_.data(), send_.size(), peer, recv_);
    }
    const kernels::SparseView other = entries_of(recv_);  // merged where it arrived
    const bool own_first = r < peer;                      // the lower rank's set first
    if (2 * distance == group) {
      // The last round: all that is left to learn is which of own's entries are in U, which the
      // merge marks without carrying tags.
      kernels::merge_keep_k(own_first ? *own : other, own_first ? other : *own, k, merged_,
                            own_first ? kernels::MergeInput::a : kernels::MergeInput::b, own_in_u);
      std::swap(current_, merged_);
      break;
    }
    if (untagged_.size() < other.size()) untagged_.resize(other.size(), kernels::kUntagged);
    const auto theirs = std::span(untagged_).first(other.size());
    if (own_first) {
      kernels::merge_keep_k(*own, own_tags, other, theirs, k, merged_, merged_tags_);
    } else {
      kernels::merge_keep_k(other, theirs, *own, own_tags, k, merged_, merged_tags_);
    }
    std::swap(current_, merged_);
    std::swap(tags_, merged_tags_);
    own = &current_;
    own_tags = tags_;
  }

  // With more rounds, an entry of the last round's own set survived every round if it is in U
  // and carries a tag: the position, in the set the butterfly started from, of the entry it came
  // through as. Part of that set is the partners' (untagged), at random: their marks go to one
  // slot past the end, and every mark is written, 0 or 1, so that nothing takes a branch, which
  // would be mispredicted half the time.
  if (group > 2) {
    const std::size_t tagged = has_guest ? first_.size() : local.size();
    survived.assign(tagged + 1, 0);
    for (std::size_t i = 0; i < own_tags.size(); ++i) {
      survived[std::min<std::size_t>(own_tags[i], tagged)] = own_in_u_[i];
    }
    survived.resize(tagged);
  }
  if (!has_guest) return;
  // With a guest, an entry of either selection survived if its index is among the survivors.
  survivors_.clear();
  for (std::size_t i = 0; i < first_.size(); ++i) {
    if (survived_[i] != 0) survivors_.push_back(first_.indices[i]);
  }
  guest_alive_.assign(guest_.size(), 1);
  applied.assign(local.size(), 1);
  keep_survivors(local.indices, survivors_, applied);
  keep_survivors(guest_.indices, survivors_, guest_alive_);
  pack(current_, send_);
  send_.insert(send_.end(), reinterpret_cast<const std::byte*>(guest_alive_.data()),
               reinterpret_cast<const std::byte*>(guest_alive_.data() + guest_alive_.size()));
  comm_.send(send_.data(), send_.size(), r + group);
}

void GtopkAggregation::write_update(kernels::Buffer<float> update) {
  kernels::ops::fill_zero(update);
  kernels::ops::scatter_add(current_, update, staging_);
}

}  // namespace commsgd::algorithms
