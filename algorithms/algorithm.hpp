#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/comm/communicator.hpp"
#include "algorithms/state.hpp"
#include "kernels/buffer.hpp"
#include "kernels/distribution.hpp"

namespace commsgd::algorithms {

// Cumulative since construction; the trainer takes differences per iteration. Select,
// communicate and wait seconds are the training thread's own, each second counted in one of
// them only: with the trainer's phases they add up to the iteration.
struct AlgorithmStats {
  double select_seconds = 0;
  double communicate_seconds = 0;  // communicating on the training thread
  double wait_seconds = 0;         // waiting, for the slowest rank or for another thread's exchange
  // Seconds another thread (the communication engine) spent in exchanges while training went on:
  // hidden behind computation but for the part the training thread waited for (wait_seconds),
  // so never a phase of the iteration.
  double overlapped_seconds = 0;
  // Spent on studies that are not training (--grad-stats-every, --norm-study-every): left out
  // of every phase and of the iteration's total, and what they moved out of its traffic.
  double measure_seconds = 0;
  std::uint64_t measure_bytes_sent = 0;
  std::uint64_t measure_bytes_received = 0;
  // The algorithm's own account of its traffic. The record takes the communicator's count
  // instead (Communicator::traffic_with_duplicates); the tests hold the two equal.
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t entries_sent = 0;     // gradient entries this rank contributed
  std::uint64_t entries_offered = 0;  // gradient entries it could have contributed (d per step)
};

// The "Understanding Top-k" measurement (--grad-stats-every) of one rank's accumulated gradient
// acc = g + e at one iteration, before its selection S.
struct GradStats {
  double contraction = 0;    // ‖acc − acc_S‖² / ‖acc‖²
  double bound_linear = 0;   // 1 − k/d, k = |S|: what the worst case (all |acc_i| equal) leaves
  double bound_squared = 0;  // (1 − k/d)²
  double mean = 0, stddev = 0;
  kernels::Histogram histogram;  // of acc over mean ± 4 stddev
};

// The gTop-k paper's norm study (--norm-study-every; its code's PROFILING_NORM) at one
// iteration: how far the aggregated update lands from the dense one. x is the dense aggregate
// (1/P)·Σ_r acc_r of the same step, u the update the algorithm applied, k the entries random-k
// keeps (algorithms/norm_study.hpp) and d the entries.
struct NormStudy {
  double dense_norm = 0;         // ‖x‖
  double dense_std = 0;          // the standard deviation of x's entries
  double selected_distance = 0;  // ‖x − u‖: the algorithm's own selection and aggregation
  double randk_distance = 0;     // ‖x − randk(x)‖: k entries of x itself, kept at random
  double bound = 0;  // (1 − k/d)·‖x‖, as the paper's code computes it (no square root)
};

using kernels::Buffer;

// One parameter of the model as it lies in the flat buffers: where it starts and its shape, as
// DDP's GradBucket shows a communication hook. An algorithm that compresses tensor by tensor (a
// scale per tensor, a matrix per weight) reads it; the rest see one flat vector.
struct ParameterLayout {
  std::size_t offset = 0;
  std::vector<std::int64_t> shape;  // {} for a scalar

  std::size_t entries() const {  // the product of the shape
    std::size_t n = 1;
    for (const std::int64_t extent : shape) n *= static_cast<std::size_t>(extent);
    return n;
  }
};

// The entries `layout` covers; throws std::logic_error, naming `who`, unless it lays its
// parameters back to back from 0 (the flat buffers' order).
std::size_t layout_entries(std::span<const ParameterLayout> layout, const char* who);

// The one interface the trainer drives, at fixed points of every iteration (docs/design.md,
// "Algorithm interface"):
//   backward -> synchronize_gradients(grads) -> optimizer step -> after_step(params)
// Synchronous families turn grads into the update every rank applies; gossip families leave
// grads alone and mix parameters in after_step. The buffers are where the model is (host or a
// CUDA device: kernels/buffer.hpp) if the algorithm works there, else host copies the trainer
// stages.
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // Whether it works on buffers in `memory` itself (host memory: every algorithm).
  virtual bool works_in(kernels::Memory memory) const { return memory == kernels::Memory::host; }

  // The model's parameters in the order the flat buffers hold them, back to back; called once,
  // right after construction, before anything else.
  virtual void set_layout(std::span<const ParameterLayout> /*layout*/) {}
  // Called on every rank once the initial model is in place (after its broadcast), and once
  // after the last iteration: algorithms with threads start and stop them here.
  virtual void begin_training(Buffer<const float> /*params*/) {}
  virtual void end_training() {}
  // Called on every rank before the first iteration of each epoch (epoch-based schedules).
  virtual void begin_epoch(int /*epoch*/) {}
  // Whether this rank runs another iteration of the epoch, having run `done` of the `iterations`
  // each rank is due. In lockstep (the default) every rank runs exactly `iterations`; otherwise
  // ranks may run different numbers (adpsgd: until the job as a whole has run P·iterations).
  virtual bool next_iteration(long done, long iterations) { return done < iterations; }
  virtual bool lockstep() const { return true; }
  // Overlap with backward: an algorithm that can start communicating gradients before backward
  // has finished says so. The trainer then calls begin_backward() before each backward, and
  // gradient_ready() from the thread running it each time backward has finished writing a stretch
  // [offset, offset + count) of the flat gradient buffer (one parameter's gradient).
  // synchronize_gradients() follows as always; what was not reported is final by then.
  virtual bool overlaps_backward() const { return false; }
  virtual void begin_backward(Buffer<float> /*grads*/) {}
  virtual void gradient_ready(std::size_t /*offset*/, std::size_t /*count*/) {}
  virtual void synchronize_gradients(Buffer<float> grads) = 0;
  // Around the optimizer's step, every iteration (a skipped step too). before_step may change
  // what the parameters hold while the optimizer steps on them (push-sum: the numerator x = w·z,
  // as the SGP code's optimizer steps on it); after_step mixes, and leaves the model again.
  virtual void before_step(Buffer<float> /*params*/) {}
  virtual void after_step(Buffer<float> params) = 0;
  // Evaluation, between iterations: the trainer scores the parameters between these two calls.
  // Synchronous algorithms leave them as they are. The gossip families put the consensus average
  // there (with own_model, each rank's own model instead), measure the consensus distance either
  // way (a collective), and end_evaluation puts the rank's own parameters back. In place, so that
  // evaluating never holds another model-sized buffer where the algorithm can recompute its own.
  virtual void begin_evaluation(Buffer<float> /*params*/, bool /*own_model*/) {}
  virtual void end_evaluation(Buffer<float> /*params*/) {}
  // Gossip families: (1/P)·Σ_r ‖x_r − x̄‖² as of the last begin_evaluation.
  virtual std::optional<double> consensus_distance() const { return std::nullopt; }
  virtual AlgorithmStats stats() const = 0;
  // The measurement the last iteration took, if it took one (sparse family, rank 0, every
  // grad_stats_every iterations); cleared by the call.
  virtual std::optional<GradStats> take_grad_stats() { return std::nullopt; }
  // Likewise the norm study (the algorithms whose update is in gradient units, every
  // norm_study_every iterations: every rank takes part in its dense allreduce, rank 0 measures;
  // algorithms/norm_study.hpp).
  virtual std::optional<NormStudy> take_norm_study() { return std::nullopt; }
  // Checkpoints, taken between iterations on every rank: what the algorithm needs besides the
  // parameters to go on as if never stopped (exactly so for the algorithms in lockstep without a
  // comm thread). save_state() may first wait for messages in flight, which is why it is not
  // const. load_state() is called after construction and begin_epoch() of the epoch being
  // resumed, before begin_training(). Algorithms out of lockstep are checkpointed only between
  // epochs.
  virtual void save_state(StateWriter& out) = 0;
  virtual void load_state(StateReader& in) = 0;
};

// How a rank mixes with its peers of a round (--gossip-mixing): symmetric, with neighbours that
// are both in- and out-peers (Lian et al.'s papers), or directed, sending to the out-peers and
// averaging with what the in-peers sent (the SGP code's gossiper.py).
enum class GossipMixing { symmetric, directed };

// How osgp overlaps its exchanges with training (--osgp-overlap): the SGP paper's bounded
// staleness (an exchange every iteration, at most τ unfinished), or the SGP code's one exchange
// in flight, waited for after s steps without it.
enum class OsgpOverlap { bounded_staleness, one_in_flight };

struct AlgorithmConfig {
  std::string algo = "dense";
  // Dense: gradient buckets of this size allreduced during backward (0: the whole gradient after
  // it), and the type the gradient crosses the wire in (f32, f16 or bf16).
  std::size_t bucket_bytes = 25u << 20;
  comm::DataType wire = comm::DataType::f32;
  // Sparse, and dense without buckets: wait at a barrier for every rank before the exchange and
  // count it as wait, so that communication time is the exchange alone. On oversubscribed hosts
  // the wait for the slowest rank's computation would otherwise dominate it.
  bool barrier_before_communicate = false;
  // Sparse family. Empty selector/aggregation: the algorithm's own (topk: exact + allgather,
  // gtopk: exact + gtopk, gaussiank: gaussian + allgather).
  std::string selector;
  std::string aggregation;
  double density = 0.001;
  std::string density_schedule;  // "epoch:density,...", overrides density from those epochs on
  bool error_feedback = true;
  std::uint64_t seed = 1;    // the random selector's shared seed
  int grad_stats_every = 0;  // iterations between GradStats measurements; 0: none
  int norm_study_every = 0;  // iterations between NormStudy measurements; 0: none
  // Gossip family. Empty topology: the algorithm's own (sgp, osgp: exponential; dpsgd, adpsgd:
  // bipartite-exponential).
  std::string topology;
  int peers_per_iter = 1;
  GossipMixing mixing = GossipMixing::symmetric;  // dpsgd, adpsgd
  OsgpOverlap osgp_overlap = OsgpOverlap::bounded_staleness;
  int max_staleness = 1;  // osgp, bounded staleness: iterations a rank may run ahead of arrivals
  int synch_freq = 0;     // osgp, one in flight: steps without the exchange before waiting for it
  // PowerSGD: the rank of each compressed matrix's approximation, and the iterations allreduced
  // uncompressed before compression starts.
  int powersgd_rank = 1;
  long powersgd_start_iter = 0;
  // QSGD: the levels s each entry's |v_i|/‖v‖ is rounded to, and the entries of a bucket.
  int qsgd_levels = 4;
  int qsgd_bucket = 512;
};

}  // namespace commsgd::algorithms
