// The collective algorithms Open MPI 4.1 runs for commsgd's two collectives of any size, and what
// each costs in the α-β model. Open MPI's coll/tuned component picks an algorithm per call from
// fixed rules on the communicator size and the message size (coll_tuned_decision_fixed.c in
// v4.1.4, the version Debian 12 ships); the rules below are those, for a commutative operation
// (MPI_SUM), as the trainer's allreduce is. The cost model prices a dense allreduce, Top-k's
// allgatherv and signSGD's allgather by the algorithm that actually runs, not by one textbook
// algorithm for every size.
#pragma once

#include <string_view>

#include "analysis/report/cost_model.hpp"

namespace commsgd::report {

enum class AllreduceAlgorithm {
  basic_linear,        // reduce to rank 0, then broadcast, each a message per rank
  nonoverlapping,      // reduce, then broadcast, each along a binomial tree
  recursive_doubling,  // ⌈log2 P⌉ exchanges of the whole vector
  ring,                // reduce-scatter and allgather around a ring (also "segmented ring" with
                       // no segment size, which is what the fixed rules ask for)
  rabenseifner,        // reduce-scatter by recursive halving, allgather by recursive doubling
};

enum class AllgathervAlgorithm {
  gather_broadcast,   // "default": gatherv to rank 0, then a broadcast of everything
  bruck,              // ⌈log2 P⌉ steps of doubling size
  ring,               // P − 1 steps, one block each
  neighbor_exchange,  // P/2 steps between alternating neighbours
  two_procs,          // P = 2: one exchange
};

enum class AllgatherAlgorithm {
  recursive_doubling,  // log2 P exchanges of doubling size; Bruck's when P is not a power of two
  bruck,
  ring,
  neighbor_exchange,
  two_procs,
};

// The algorithm Open MPI 4.1's fixed rules pick for an allreduce of `bytes` over `ranks` ranks.
AllreduceAlgorithm tuned_allreduce(int ranks, double bytes);
// ... for an allgatherv of `bytes_per_rank` on average from each of `ranks` ranks.
AllgathervAlgorithm tuned_allgatherv(int ranks, double bytes_per_rank);
// ... for an allgather of `bytes_per_rank` from each of `ranks` ranks.
AllgatherAlgorithm tuned_allgather(int ranks, double bytes_per_rank);

// Seconds for the algorithm, every rank's link alike: the steps of the critical path in order,
// each priced as one message of its size, an exchange or one way (Transfers; α + β·bytes on a
// plain link); an exchange after the collective's first as a follow-on step (Transfers::follow_on).
double allreduce_seconds(AllreduceAlgorithm algorithm, int ranks, double bytes, Transfers& link);
double allgatherv_seconds(AllgathervAlgorithm algorithm, int ranks, double bytes_per_rank,
                          Transfers& link);
double allgather_seconds(AllgatherAlgorithm algorithm, int ranks, double bytes_per_rank,
                         Transfers& link);

std::string_view name(AllreduceAlgorithm algorithm);
std::string_view name(AllgathervAlgorithm algorithm);
std::string_view name(AllgatherAlgorithm algorithm);

}  // namespace commsgd::report
