#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "kernels/ops.hpp"

namespace commsgd::algorithms {

// The exchange of the compressed algorithms that allgather: every rank's code, a fixed number of
// 64-bit words (signSGD's signs, a bit an entry: kernels/sign_bits.hpp; QSGD's levels:
// kernels/qsgd.hpp), and its scales (a float a tensor or a bucket), to every rank in one
// allgather. A rank's block is its code, then its scales two to a word:
// 8·words + 8·⌈scales/2⌉ bytes. The blocks are where the gradient is (host or device memory),
// and so is the allgather.
class CodeAllgather {
 public:
  CodeAllgather(comm::Communicator& comm, std::size_t code_words, std::size_t scales);

  // Puts the blocks in `place` (the gradient's, at every step: nothing when they are there).
  void place(kernels::Place place);

  // This rank's block, filled before exchange().
  Buffer<std::uint64_t> my_code();
  Buffer<float> my_scales();

  // The allgather, with a barrier first where `barrier_first` (--barrier-before-communicate):
  // adds its seconds (the barrier's as wait, the allgather's as communication, on a device until
  // it is done) and the bytes it moved to `stats`.
  void exchange(AlgorithmStats& stats, bool barrier_first);

  // Rank r's block, as exchange() brought it.
  Buffer<const std::uint64_t> code_of(int rank) const;
  Buffer<const float> scales_of(int rank) const;

  std::size_t bytes_per_rank() const { return block_words_ * sizeof(std::uint64_t); }

 private:
  comm::Communicator& comm_;
  const std::size_t code_words_;
  const std::size_t scales_;
  const std::size_t block_words_;
  kernels::ops::Storage<std::uint64_t> mine_;
  kernels::ops::Storage<std::uint64_t> all_;  // the blocks in rank order
};

}  // namespace commsgd::algorithms
