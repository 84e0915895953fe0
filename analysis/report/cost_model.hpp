// The α-β cost model of one iteration's communication (docs/design.md, "Sparse family"), for
// `commsgd-report simulate`: α seconds per message, β seconds per byte on each worker's link.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/catalog.hpp"

namespace commsgd::report {

// The time of one message by its size: α + β·bytes, and where a calibration measured sizes,
// what was measured there. A shaped link passes a message up to its token-bucket burst at full
// speed, which no straight line prices.
struct MessageTime {
  double alpha = 0;                                 // s
  double beta = 0;                                  // s/byte
  std::vector<std::pair<double, double>> measured;  // (bytes, s), bytes ascending; may be empty

  // Interpolated in `measured` between its two nearest sizes, its first time below them;
  // α + β·bytes beyond them, or without them.
  double seconds(double bytes) const;
};

// A link, in both directions: what a message costs while another goes the other way at once
// (every exchange, ring step and gossip round), and while the other direction is idle (the
// steps of a reduce or broadcast tree, gTop-k's fold). Without a one-way calibration, a one-way
// message costs what an exchange does.
struct Link {
  MessageTime exchange;  // back to back, as the ping-pong sends them
  std::optional<MessageTime> one_way;
  // Exchanges after the ranks computed, as a training step makes them (the ping-pong's after-idle
  // sweep), fitted below the burst: α, the latency of the first message after computation
  // (caches as computation leaves them), and β, the hosts' speed for bytes a full token bucket
  // passes. None where the link was calibrated without it, or given as α and β.
  std::optional<MessageTime> after_idle;
  // The first message's latency by how long the ranks computed before it: (seconds computed,
  // seconds of the ping-pong's smallest exchange after that), computed ascending. It grows with
  // the computation, which leaves the caches colder (results/costmodel/README.md).
  // Where it is empty, the first message's latency is after_idle's α.
  std::vector<std::pair<double, double>> latency_after_idle;
  // A link shaped by a token bucket (the emulated hosts' tbf; many cloud NICs): while the link
  // is idle the bucket refills at the link's rate, 1/exchange.beta, up to `burst_bytes`, and as
  // many bytes as it holds pass at the hosts' speed. 0: a wire, every byte at the link's rate.
  double burst_bytes = 0;
  // What an Open MPI collective's exchange costs beyond `exchange` when it follows another of the
  // same collective (its receive posted first; over TCP, beyond the eager limit, the two
  // directions of such a step now and then go one after the other): (bytes, seconds), bytes
  // ascending, from the ping-pong's two receive-first steps. Empty: nothing more.
  std::vector<std::pair<double, double>> follow_on_extra;

  double message_seconds(double bytes) const { return exchange.seconds(bytes); }
  double one_way_seconds(double bytes) const {
    return one_way ? one_way->seconds(bytes) : exchange.seconds(bytes);
  }
};

// The messages of one iteration, priced in the order they go. On a link with an after-idle
// calibration, an iteration that computed for `idle_seconds` starts with the latency after that
// much computation and with what the computation put in the token bucket, at most the burst. Each
// exchange takes from the bucket what it can, at the hosts' speed; the bytes beyond cost what the
// back-to-back exchange of that many bytes cost beyond its smallest size's time. Later exchanges
// have the back-to-back α. Without that calibration every message costs the link's price for its
// size.
class Transfers {
 public:
  explicit Transfers(const Link& link, double idle_seconds = 0);
  // Seconds of `times` messages of `bytes` each, one after another: exchanged both ways at once,
  // or one way.
  double exchange(double bytes, int times = 1);
  double one_way(double bytes, int times = 1);
  // Exchanges that each follow another step of the same collective: an exchange and the link's
  // follow_on_extra.
  double follow_on(double bytes, int times = 1);
  // A collective's `count` steps of one size, in a row: the first an exchange, the rest follow-ons.
  double steps(double bytes, int count);

 private:
  double exchange_once(double bytes);
  double one_way_once(double bytes);

  const Link& link_;
  bool after_idle_;           // the next message is the first after computation
  double first_latency_ = 0;  // its latency
  double tokens_ = 0;         // bytes in the bucket
};

// Link::follow_on_extra from the ping-pong's two receive-first steps at each size (bytes,
// seconds of both): what they took beyond two exchanges of the size, none where they took less.
std::vector<std::pair<double, double>> follow_on_extra(
    const MessageTime& exchange, const std::vector<std::pair<double, double>>& two_steps);

// A link of α and β in both directions, measured at no size (--alpha and --beta, the papers').
Link plain_link(double alpha, double beta);

// What decides an iteration's communication. What the algorithm sends and on which thread is its
// row's (algorithms/traffic.hpp); the rest is the run's.
struct Exchange {
  std::string algo;         // --algo
  std::string aggregation;  // sparse family: allgather or gtopk
  std::string topology;     // gossip family
  int workers = 1;
  double parameters = 0;   // d
  double entries = 0;      // sparse family and powersgd: entries each worker sends (k, or achieved)
  double wire_bytes = 4;   // dense: bytes per entry on the wire (fp32 4, fp16/bf16 2)
  double buckets = 1;      // dense: allreduces per iteration
  bool bucketed = false;   // dense: --bucket-mb > 0, the allreduces on the engine's thread
  int peers_per_iter = 1;  // sgp, osgp
  double qsgd_levels = 4;  // qsgd: s
  double qsgd_bucket = 512;  // qsgd: entries a bucket
  // gtopk: seconds of one merge of two sets of `entries` on these hosts, as a training step's
  // round makes it (commsgd-bench merge); 0 where it was not measured.
  double merge_seconds = 0;
};

// What `row` sends an iteration, with `aggregation` for a sparse row (its default where empty).
// Throws std::invalid_argument naming the row when it states no traffic: the cost model has no
// formula for it.
algorithms::Traffic priced_traffic(const algorithms::AlgorithmRow& row,
                                   std::string_view aggregation = {});

// The traffic of the exchange's algorithm: priced_traffic of its row. Throws
// std::invalid_argument for an algorithm that is not in this build's table or is not priced.
algorithms::Traffic traffic_of(const Exchange& e);

// Seconds one iteration spends communicating, all of it, after `idle_seconds` of computation;
// each message priced by Transfers, which on a plain link is α + β·bytes, by the row's traffic:
//   bucketed_allreduce  one allreduce of w·d/buckets bytes per bucket, by the algorithm Open MPI
//                       4.1 runs for that size and P (open_mpi_tuned.hpp; e.g. a ring:
//                       2α(P−1) + 2(P−1)/P·w·d·β)
//   allgathered_sets    the sizes, ⌈log2 P⌉ messages of 8 bytes, then an allgatherv of 8k bytes
//                       a rank, by the algorithm Open MPI runs (e.g. Bruck's: α·⌈log2 P⌉ +
//                       (P−1)·8k·β)
//   gtopk_rounds        (α + 8k·β + merge) per round: ⌊log2 P⌋ rounds; when P is not a power of
//                       two, a fold in (α + 8k·β + merge) and a fold out (α + 8k·β), one way each
//   allgathered_signs   an allgather of 8⌈d/64⌉ bytes a rank by the algorithm Open MPI runs (e.g.
//                       recursive doubling: α·log2 P + (P−1)·8⌈d/64⌉·β)
//   allgathered_levels  an allgather of a rank's code, 8·⌈n/c⌉ bytes a bucket of n entries (c
//                       codes of 2 + ⌊log2 s⌋ bits to a word) and 8·⌈buckets/2⌉ of norms, by the
//                       algorithm Open MPI runs
//   allreduced_factors  two allreduces of 4k/2 bytes, k the entries a rank sends a step (the
//                       rest, the P's and the Q's; the record keeps their sum), by the algorithm
//                       Open MPI runs for that size
//   push_to_peers       α + n·4(d+1)·β, a share of (x, w) to each of n out-peers
//   neighbour_average   α + m·4d·β, m neighbours (1 on the bipartite-exponential graph, 2 on a
//                       ring)
//   pairwise_average    α + 4d·β each way, one pairwise average
double communication_seconds(const Exchange& e, const Link& link, double idle_seconds = 0);

// The Open MPI algorithm that communication_seconds priced ("allreduce rabenseifner"), or ""
// where the algorithm sends point to point itself.
std::string priced_as(const Exchange& e);

// Whether the algorithm communicates on a thread of its own, beside computation (its row's
// overlap: dense with buckets, osgp, adpsgd): then only part of the communication shows in the
// iteration time, and the training thread's wait, not its communication, is what it waited for.
bool communicates_on_a_thread(const Exchange& e);

// Seconds of communication an iteration waits for, given `computing` seconds of everything
// else (of which backward is `backward`; the link idles through it): all of it when it blocks;
// with a thread, what outlasts the computation it overlaps (dense: backward, but at least the
// last bucket's transfer; osgp and adpsgd: the whole iteration's computation).
double exposed_seconds(const Exchange& e, const Link& link, double computing, double backward);

}  // namespace commsgd::report
