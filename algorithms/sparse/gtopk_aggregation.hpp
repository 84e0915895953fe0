#pragma once

#include "algorithms/sparse/aggregation.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// gTop-k (Shi et al., ICDCS 2019): a global top-k by recursive doubling. In round i every rank
// swaps its current set with rank r XOR 2^i; both merge the two (lower rank's set first) and keep
// the k largest, so partners agree after each round and every rank holds U after log2 P rounds,
// with no broadcast. Cost α·log P + log P·8k·β.
//
// Any P: the P − 2^⌊log2 P⌋ extra ranks first hand their sets to a partner of the power-of-two
// group ("fold in"), which merges them, runs the butterfly, and returns U and the extra rank's
// survival mask ("fold out") — two more messages for those pairs.
class GtopkAggregation final : public Aggregation {
 public:
  // A round's set of 8k bytes travels packed in one message below this size, and from it on as
  // two messages, values and indices, from where the set holds them: a large set's pack is a
  // pass over it and a second copy, which costs more than a second message, while a small set's
  // second message costs more than its pack over TCP (docs/design.md, "Aggregations"). Every
  // rank has the same k, so partners agree on how many messages to expect.
  static constexpr std::size_t kPartsFromBytes = 64 * 1024;

  explicit GtopkAggregation(comm::Communicator& comm,
                            std::size_t parts_from_bytes = kPartsFromBytes)
      : comm_(comm), parts_from_bytes_(parts_from_bytes) {}
  void exchange(const kernels::SparseSet& local, std::size_t k,
                std::vector<std::uint8_t>& applied) override;
  void write_update(kernels::Buffer<float> update) override;

 private:
  comm::Communicator& comm_;
  std::size_t parts_from_bytes_;
  kernels::SparseSet current_, merged_;
  kernels::SparseSet guest_;  // an extra rank's selection, held by its partner
  kernels::SparseSet first_;  // with a guest: the merge of both, where the butterfly starts
  std::vector<std::uint8_t> guest_alive_;
  // Survival: the tags of current_'s entries, of the merge's output, the partner's (all
  // kernels::kUntagged) and the first round's (positions); which entries of the last round's own
  // set are in U; with a guest, whether each entry of the fold-in merge survived, and the indices
  // that did.
  std::vector<std::uint32_t> tags_, merged_tags_, untagged_, positions_;
  std::vector<std::uint8_t> own_in_u_, survived_;
  std::vector<std::uint32_t> survivors_;
  std::vector<std::byte> send_, recv_;
  kernels::ops::SparseStaging staging_;
};

}  // namespace commsgd::algorithms
