#include "algorithms/gradient_buckets.hpp"

#include <algorithm>
#include <stdexcept>

namespace commsgd::algorithms {

GradientBuckets::GradientBuckets(std::size_t entries, std::size_t bucket_entries)
    : entries_(entries), bucket_entries_(bucket_entries) {
  if (bucket_entries == 0) throw std::invalid_argument("a gradient bucket must hold an entry");
  unfilled_.resize((entries + bucket_entries - 1) / bucket_entries);
  reset();
}

GradientBuckets::Range GradientBuckets::range(std::size_t bucket) const {
  const std::size_t end = entries_ - bucket * bucket_entries_;
  return {end > bucket_entries_ ? end - bucket_entries_ : 0, end};
}

std::size_t GradientBuckets::bucket_of(std::size_t position) const {
  return (entries_ - 1 - position) / bucket_entries_;
}

void GradientBuckets::reset() {
  for (std::size_t b = 0; b < count(); ++b) unfilled_[b] = range(b).end - range(b).begin;
}

bool GradientBuckets::fill(std::size_t offset, std::size_t count) {
  if (count == 0) return false;
  if (offset + count > entries_) throw std::out_of_range("gradient range outside the buffer");
  bool became_full = false;
  for (std::size_t b = bucket_of(offset + count - 1); b <= bucket_of(offset); ++b) {
    const Range r = range(b);
    const std::size_t overlap = std::min(r.end, offset + count) - std::max(r.begin, offset);
    if (overlap > unfilled_[b]) throw std::logic_error("a gradient was reported ready twice");
    unfilled_[b] -= overlap;
    became_full = became_full || unfilled_[b] == 0;
  }
  return became_full;
}

void GradientBuckets::fill_all() {
  std::fill(unfilled_.begin(), unfilled_.end(), 0);
}

}  // namespace commsgd::algorithms
