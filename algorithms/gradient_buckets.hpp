#pragma once

#include <cstddef>
#include <vector>

namespace commsgd::algorithms {

// A flat gradient buffer cut into buckets that are communicated as soon as backward has filled
// them (PyTorch DDP's and Horovod's overlap). Backward produces the last layers' gradients first,
// so the buckets are laid out from the end of the buffer: bucket 0 is its last bucket_entries
// entries, and the last bucket, at the front, may be shorter. Bookkeeping only; no threads.
class GradientBuckets {
 public:
  struct Range {
    std::size_t begin, end;
  };

  GradientBuckets(std::size_t entries, std::size_t bucket_entries);

  std::size_t count() const { return unfilled_.size(); }
  Range range(std::size_t bucket) const;

  // Every entry unfilled again (a new backward).
  void reset();
  // Marks [offset, offset + count) filled. Returns whether a bucket became full by it; throws
  // std::logic_error when a bucket would take more entries than it has (a gradient reported
  // twice).
  bool fill(std::size_t offset, std::size_t count);
  // Marks everything filled: what backward did not report is final.
  void fill_all();
  bool full(std::size_t bucket) const { return unfilled_[bucket] == 0; }

 private:
  std::size_t bucket_of(std::size_t position) const;

  std::size_t entries_, bucket_entries_;
  std::vector<std::size_t> unfilled_;  // per bucket, entries backward has yet to report
};

}  // namespace commsgd::algorithms
