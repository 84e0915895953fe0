// The α-β cost model of one iteration's communication (docs/design.md, "Sparse family"), for
// `commsgd-report simulate`: α seconds per message, β seconds per byte on each worker's link.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace commsgd::report {

struct Link {
  double alpha = 0;  // s
  double beta = 0;   // s/byte
  // The calibration's measured time of one exchange by size, (bytes, s) with bytes ascending,
  // or empty. A shaped link passes a message up to its token-bucket burst at full speed, which
  // no straight line prices: within the measured sizes a message costs what was measured there.
  std::vector<std::pair<double, double>> measured;

  // Seconds for one message of `bytes`: interpolated in `measured` between its two nearest
  // sizes, its first time below them; α + β·bytes beyond them, or without them.
  double message_seconds(double bytes) const;
};

// What decides an iteration's communication.
struct Exchange {
  std::string algo;         // --algo
  std::string aggregation;  // sparse family: allgather or gtopk
  std::string topology;     // gossip family
  int workers = 1;
  double parameters = 0;   // d
  double entries = 0;      // sparse family: entries each worker contributes (k, or achieved)
  double wire_bytes = 4;   // dense: bytes per entry on the wire (fp32 4, fp16/bf16 2)
  double buckets = 1;      // dense: allreduces per iteration
  int peers_per_iter = 1;  // sgp, osgp
};

// Seconds one iteration spends communicating, all of it; each message priced by
// Link::message_seconds of its size, which on a plain link is α + β·bytes, as written here:
//   dense     one allreduce of w·d/buckets bytes per bucket, by the algorithm Open MPI 4.1 runs
//             for that size and P (open_mpi_tuned.hpp; e.g. a ring: 2α(P−1) + 2(P−1)/P·w·d·β)
//   allgather the sizes, ⌈log2 P⌉ messages of 8 bytes, then an allgatherv of 8k bytes a rank,
//             by the algorithm Open MPI runs (e.g. Bruck's: α·⌈log2 P⌉ + (P−1)·8k·β)
//   gtopk     (α + 8k·β) per round: ⌊log2 P⌋ rounds, 2 more when P is not a power of two
//   sgp/osgp  α + n·4(d+1)·β, a share of (x, w) to each of n out-peers
//   dpsgd     α + m·4d·β, m neighbours (1 on the bipartite-exponential graph, 2 on a ring)
//   adpsgd    α + 4d·β each way, one pairwise average
double communication_seconds(const Exchange& e, const Link& link);

// The Open MPI algorithm that communication_seconds priced ("allreduce rabenseifner"), or ""
// where the algorithm sends point to point itself.
std::string priced_as(const Exchange& e);

// Whether the algorithm communicates on a thread of its own, beside computation (dense with
// buckets, osgp, adpsgd): then only part of the communication shows in the iteration time.
bool communicates_on_a_thread(const Exchange& e);

// Seconds of communication an iteration waits for, given `computing` seconds of everything
// else (of which backward is `backward`): all of it when it blocks; with a thread, what outlasts
// the computation it overlaps (dense: backward, but at least the last bucket's transfer; osgp
// and adpsgd: the whole iteration's computation).
double exposed_seconds(const Exchange& e, const Link& link, double computing, double backward);

}  // namespace commsgd::report
