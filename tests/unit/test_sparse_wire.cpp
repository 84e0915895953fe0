// The wire format of a sparse set (algorithms/sparse/aggregation.hpp): what a rank packs, the
// receiver reads in place (entries_of) or copies out (unpack), entry for entry; gTop-k merges
// a partner's set in place, with the same result as a merge of the set copied out.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "algorithms/sparse/aggregation.hpp"
#include "kernels/sparse_ops.hpp"

namespace commsgd::algorithms {
namespace {

using kernels::SparseSet;
using kernels::SparseView;

TEST(SparseWire, AReceivedSetIsReadWhereItLies) {
  const SparseSet sent{{0.5f, -2.0f, 3.0f}, {4, 9, 70}};
  std::vector<std::byte> message;
  pack(sent, message);
  ASSERT_EQ(message.size(), 8 * sent.size());

  const SparseView view = entries_of(message);
  ASSERT_EQ(view.size(), sent.size());
  EXPECT_EQ(static_cast<const void*>(view.values.data()), message.data());  // no copy
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(view.values[i], sent.values[i]);
    EXPECT_EQ(view.indices[i], sent.indices[i]);
  }
  SparseSet copied;
  unpack(message, copied);
  EXPECT_EQ(copied.values, sent.values);
  EXPECT_EQ(copied.indices, sent.indices);

  // Merged in place or copied out first, the partner's set gives the same union.
  const SparseSet mine{{1.0f, 4.0f}, {9, 12}};
  SparseSet in_place, from_copy;
  kernels::merge_keep_k(mine, view, 3, in_place);
  kernels::merge_keep_k(mine, copied, 3, from_copy);
  EXPECT_EQ(in_place.values, from_copy.values);
  EXPECT_EQ(in_place.indices, from_copy.indices);
  EXPECT_EQ(in_place.indices, (std::vector<std::uint32_t>{9, 12, 70}));  // 9: 1 + (−2) = −1
}

TEST(SparseWire, AMessageOfAPartialEntryIsRejected) {
  const std::vector<std::byte> message(12);
  EXPECT_THROW(entries_of(message), std::runtime_error);
  SparseSet set;
  EXPECT_THROW(unpack(message, set), std::runtime_error);
}

// A merge whose output is where one of its inputs lies would overwrite that input as it reads
// it: refused for a view as for a set.
TEST(SparseWire, AMergeDoesNotWriteWhereItsInputLies) {
  SparseSet out{{1.0f}, {3}};
  const SparseView of_out = out;
  EXPECT_THROW(kernels::merge_keep_k(of_out, SparseSet{{2.0f}, {5}}, 1, out),
               std::invalid_argument);
}

}  // namespace
}  // namespace commsgd::algorithms
