#pragma once

// What one iteration of an algorithm sends, and on which thread: the part of an algorithm's row
// that commsgd-report's cost model reads (analysis/report/cost_model.hpp prices each kind of
// traffic; docs/design.md, "The cost model"). A row that states no traffic trains, but the cost
// model refuses to price it and names the row.
namespace commsgd::algorithms {

enum class Traffic {
  unstated,            // the row says nothing: no prediction for it
  of_aggregation,      // a sparse row: what its --aggregation's row states
  bucketed_allreduce,  // the gradient, one allreduce per bucket
  allgathered_sets,    // every rank's selected set to every rank: the sizes, then the sets
  gtopk_rounds,        // ⌊log2 P⌋ exchanges of a set, each merged; folds beyond a power of two
  allgathered_signs,   // every rank's signs, a bit an entry, to every rank (and a scale a tensor)
  allgathered_levels,  // every rank's QSGD code, levels and signs packed, and a norm a bucket
  allreduced_factors,  // low rank: the uncompressed rest and every P in one allreduce, the Q's in
                       // one
  push_to_peers,       // a share of (x, w) to each out-peer of the round, sent at once
  neighbour_average,   // x to each neighbour the topology gives this iteration
  pairwise_average,    // x both ways with one peer
};

// Which thread sends that traffic, and so how much of it an iteration waits for.
enum class Overlap {
  none,           // the training thread: the iteration waits for all of it
  with_backward,  // the engine, bucket by bucket as backward makes them, where --bucket-mb > 0
  with_step,      // a thread of its own, beside the whole iteration
};

}  // namespace commsgd::algorithms
