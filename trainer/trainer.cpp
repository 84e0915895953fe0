#include "trainer/trainer.hpp"

#include <fmt/core.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <algorithm>
#include <fstream>

#include "algorithms/comm/work.hpp"
#include "algorithms/epoch_schedule.hpp"
#include "algorithms/stopwatch.hpp"
#include "analysis/record/peer_failures.hpp"
#include "common/stable_hash.hpp"
#include "kernels/ops.hpp"
#include "trainer/checkpoint.hpp"
#include "trainer/comm_timeout.hpp"
#include "trainer/data/batch_reader.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/sampler.hpp"
#include "trainer/evaluation.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/lr_schedule.hpp"
#include "trainer/models.hpp"
#include "trainer/progress.hpp"
#include "trainer/rank_record.hpp"
#include "trainer/resume.hpp"
#include "trainer/run_info.hpp"
#include "trainer/setup.hpp"
#include "trainer/setup_check.hpp"
#include "trainer/sgd_optimizer.hpp"
#include "trainer/stall_watchdog.hpp"
#include "trainer/step_metrics.hpp"
#include "trainer/termination.hpp"
#include "trainer/weight_decay.hpp"

namespace commsgd::trainer {
namespace {

using algorithms::Stopwatch;

void write_params(const std::string& path, std::span<const float> params) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(params.data()),
            static_cast<std::streamsize>(params.size_bytes()));
  if (!out) throw std::runtime_error("--dump-params: cannot write " + path);
}

// The loop itself, on every rank: for each epoch, for each batch, one step(); then evaluate and
// record the epoch. Rank 0 alone writes the database and prints progress.
class TrainingLoop {
 public:
  // `resumed`: the checkpoint this run continues from, or null for a run from the start.
  TrainingLoop(const Options& o, comm::Communicator& comm, Setup& s, const RankCheckpoint* resumed,
               StallWatchdog& watchdog)
      : o_(o),
        comm_(comm),
        s_(s),
        watchdog_(watchdog),
        rank0_(comm.rank() == 0),
        skip_nonfinite_(o.on_nonfinite == OnNonfinite::skip_step),
        total_iterations_(o.max_steps > 0
                              ? std::min<long>(o.max_steps, s.iterations_per_epoch * o.epochs)
                              : s.iterations_per_epoch * o.epochs),
        epochs_(static_cast<int>((total_iterations_ + s.iterations_per_epoch - 1) /
                                 s.iterations_per_epoch)),
        schedule_(o.lr * (o.scale_lr ? comm.size() : 1),
                  algorithms::parse_epoch_values(o.lr_schedule), o.warmup_epochs,
                  warmup_start_fraction(o, comm.size()), o.lr_update_every),
        progress_(rank0_ && !o.quiet, epochs_, total_iterations_),
        momentum_(torch::zeros({static_cast<std::int64_t>(s.flat->params().size())},
                               torch::device(s.flat->params().on_host() ? torch::kCPU : s.device))),
        optimizer_({.momentum = o.momentum,
                    .weight_decay = o.weight_decay,
                    .nesterov = o.nesterov,
                    .clip_grad_norm = o.clip_grad_norm},
                   decay_stretches(*s.model, o.no_decay_bn_bias)) {
    const auto b = static_cast<std::int64_t>(o.batch_size);
    if (s.train_streams) {
      const auto bptt = static_cast<std::int64_t>(o.bptt);
      tokens_.resize(static_cast<std::size_t>(bptt * b));
      labels_.resize(tokens_.size());
      x_ = torch::from_blob(tokens_.data(), {bptt, b}, torch::kInt64);
    } else {
      train_reader_ = make_reader(o, s.dataset, true, comm.rank(), s.loader_threads);
      validation_reader_ = make_reader(o, s.dataset, false, comm.rank(), s.loader_threads);
      const data::SampleShape& shape = s.dataset.shape;
      features_.resize(static_cast<std::size_t>(b) * shape.numel());
      labels_.resize(static_cast<std::size_t>(b));
      x_ = torch::from_blob(features_.data(), {b, shape.channels, shape.height, shape.width});
    }
    y_ = torch::from_blob(labels_.data(), {static_cast<std::int64_t>(labels_.size())},
                          torch::kInt64);
    if (resumed != nullptr) {
      start_ = resumed->position;
      last_checkpoint_step_ = start_.step;
      if (resumed->momentum.size() != static_cast<std::size_t>(momentum_.numel())) {
        throw CheckpointError("checkpoint: the optimizer state has another size");
      }
      set_values(momentum_, resumed->momentum);
      if (train_reader_) train_reader_->set_rng_state(resumed->augment_rng);
      s.model->set_state(resumed->model_state);
      train_sums_ = resumed->train_sums;
    }
  }

  TrainingResult run() {
    TrainingResult result;
    long iteration = start_.step;
    Evaluation eval;
    for (int epoch = start_.epoch; epoch < epochs_; ++epoch) {
      const long first_iteration = epoch == start_.epoch ? start_.iteration_in_epoch : 0;
      if (train_reader_) {
        train_reader_->begin_epoch(s_.sampler->epoch_indices(epoch),
                                   static_cast<std::size_t>(o_.batch_size), epoch);
      }
      if (first_iteration == 0) s_.model->reset_state();
      const double epoch_start = clock_.seconds();
      // Each rank's share this epoch (ranks out of lockstep may run more or fewer).
      const long iterations =
          std::min(s_.iterations_per_epoch, total_iterations_ - epoch * s_.iterations_per_epoch);
      s_.algorithm->begin_epoch(epoch);
      const bool lockstep = s_.algorithm->lockstep();
      for (long i = first_iteration; s_.algorithm->next_iteration(i, iterations);
           ++i, ++iteration) {
        result.iteration_starts.push_back(clock_.seconds());
        // A rank that runs more than its share (adpsgd) goes round its shard again.
        const IterationSample sample = step(epoch, iteration, i % s_.iterations_per_epoch);
        watchdog_.step_done(sample.total_s);
        metrics_.add(sample);
        if ((iteration + 1) % o_.log_every == 0 || (lockstep && i + 1 == iterations)) {
          metrics_.close_window(iteration);
          if (lockstep) {
            record_steps(metrics_.reduce(comm_, epoch));
            // Mid-epoch; the epoch's last step waits for the epoch's end below.
            if (i + 1 < iterations &&
                checkpoint_opportunity({iteration + 1, epoch, i + 1}, false)) {
              return stopped(result, iteration + 1);
            }
          }
        }
        if (rank0_ && clock_.seconds() - last_flush_ > kFlushSeconds) flush_steps();
        progress_.on_iteration(
            epoch, iteration, train_sums_[0] / train_sums_[2],
            samples_per_second(i + 1 - first_iteration, clock_.seconds() - epoch_start));
      }
      if (!lockstep) {
        metrics_.close_window(iteration - 1);
        record_steps(metrics_.reduce(comm_, epoch));
      }
      result.training_end = clock_.seconds();
      eval = end_epoch(
          epoch, iteration,
          samples_per_second(iterations - first_iteration, result.training_end - epoch_start));
      if (epoch + 1 < epochs_ && checkpoint_opportunity({iteration, epoch + 1, 0}, true)) {
        return stopped(result, iteration);
      }
    }
    result.iterations = iteration;
    result.skipped = skipped_;
    comm_.allreduce(std::span(&result.skipped, 1), comm::ReduceOp::sum);
    result.val_loss = eval.loss;
    result.val_top1 = eval.top1;
    return result;
  }

 private:
  // Step rows reach the database at least this often, so a crash loses little.
  static constexpr double kFlushSeconds = 30;
  static constexpr const char* kNonFiniteHint =
      " (--on-nonfinite stop; skip-step would leave it out and go on)";
  static constexpr long kSkipWarnings = 5;  // then skips are only counted

  void skipped(const std::string& what) {
    if (++skipped_ <= kSkipWarnings) {
      fmt::print(stderr, "commsgd-train: warning: rank {}: {}{}\n", comm_.rank(), what,
                 skipped_ == kSkipWarnings ? " (further skips on this rank are only counted)" : "");
    }
  }

  kernels::Buffer<float> momentum() { return buffer_of(momentum_); }

  // Seconds since the run started, counting the time before the checkpoint it resumed from.
  double run_seconds() const { return start_.elapsed_seconds + clock_.seconds(); }

  // A checkpoint may be taken here (after a logged step, or at an epoch's end; `next` is the
  // iteration to come). Writes one when it is due or when a signal asked to stop; returns
  // whether to stop. Collective: every rank takes the same decision.
  bool checkpoint_opportunity(TrainingPosition next, bool epoch_end) {
    if (o_.checkpoint_dir.empty()) return false;
    std::int64_t signal = termination::stop_requested();
    comm_.allreduce(std::span(&signal, 1), comm::ReduceOp::max);
    // Ranks out of lockstep (adpsgd, between epochs) have run different numbers of iterations:
    // number the checkpoint past all of them, as the epoch's last steps row is, so that they
    // all take the same decision.
    if (!s_.algorithm->lockstep()) comm_.allreduce(std::span(&next.step, 1), comm::ReduceOp::max);
    const bool scheduled =
        (epoch_end && o_.checkpoint_every > 0 && next.epoch % o_.checkpoint_every == 0) ||
        (o_.checkpoint_every_steps > 0 &&
         next.step - last_checkpoint_step_ >= o_.checkpoint_every_steps);
    if (signal == 0 && !scheduled) return false;
    next.elapsed_seconds = run_seconds();
    const std::filesystem::path written = write_checkpoint(next);
    if (signal == 0) return false;
    stop_signal_ = static_cast<int>(signal);
    if (rank0_) {
      s_.db->mark_preempted(
          s_.run.id, fmt::format("stopped by SIG{} at step {} with checkpoint {}; continue with "
                                 "--resume auto",
                                 sigabbrev_np(stop_signal_), next.step, written.string()));
    }
    return true;
  }

  std::filesystem::path write_checkpoint(const TrainingPosition& next) {
    if (rank0_) flush_steps();  // the record holds every step before the checkpoint
    RankCheckpoint c;
    c.run_id = s_.run.id;
    c.rank = comm_.rank();
    c.world_size = comm_.size();
    c.options_hash = computation_hash(o_);
    c.position = next;
    capture(c, *s_.flat, *s_.algorithm);
    c.momentum = values_on_host(momentum_);
    c.model_state = s_.model->state();
    c.augment_rng = train_reader_ ? train_reader_->rng_state() : 0;
    c.train_sums = train_sums_;
    const std::filesystem::path dir = checkpoint_path(o_.checkpoint_dir, next.step);
    {
      const StallWatchdog::PeersWriting writing(watchdog_);
      write_rank_checkpoint(dir, c);
      comm_.barrier();  // every rank's file is complete before an older checkpoint goes
    }
    if (rank0_) prune_checkpoints(o_.checkpoint_dir, 2);
    last_checkpoint_step_ = next.step;
    return dir;
  }

  TrainingResult& stopped(TrainingResult& result, long iterations_done) {
    result.iterations = iterations_done;
    result.stopped_by_signal = stop_signal_;
    return result;
  }

  double samples_per_second(long iterations, double seconds) const {
    return static_cast<double>(iterations * o_.batch_size * comm_.size()) / seconds;
  }

  // One iteration: batch, forward and backward, the algorithm's synchronization, the update.
  // `batch`: which of this rank's batches of the epoch. Each second of the training thread lands
  // in one phase: what the algorithm counts while the update runs (gossip's mixing exchange, the
  // wait for an exchange in flight) is its, not the update's; the rest of the synchronization
  // (error feedback, copies) is the record's `other`, what is left of the total.
  IterationSample step(int epoch, long iteration, long batch) {
    const comm::Traffic traffic_before = comm_.traffic_with_duplicates();
    const algorithms::AlgorithmStats before = s_.algorithm->stats();
    IterationSample sample;
    Stopwatch phase, whole;
    read_batch(batch);
    sample.data_s = phase.restart();
    sample.loss = forward_backward(iteration);
    sample.forward_backward_s = phase.restart();
    s_.algorithm->synchronize_gradients(s_.flat->grads());
    phase.restart();
    take_studies(epoch, iteration, phase);
    const algorithms::AlgorithmStats before_update = s_.algorithm->stats();
    update(epoch, iteration);
    const algorithms::AlgorithmStats after = s_.algorithm->stats();
    sample.update_s =
        phase.restart() - (training_thread_seconds(after) - training_thread_seconds(before_update));
    sample.total_s = whole.seconds() - (after.measure_seconds - before.measure_seconds);
    add_algorithm_figures(sample, before, after);
    add_traffic(sample, traffic_before, comm_.traffic_with_duplicates(), before, after);
    return sample;
  }

  void read_batch(long batch) {
    if (s_.train_streams) {
      s_.train_streams->read(static_cast<std::size_t>(batch), tokens_, labels_);
    } else {
      const auto b = static_cast<std::size_t>(o_.batch_size);
      train_reader_->read(static_cast<std::size_t>(batch) * b, b, features_, labels_);
    }
  }

  // Forward and backward on the batch read, with the NaN policy on this rank's loss and gradient;
  // returns the loss.
  double forward_backward(long iteration) {
    FlatParameters& flat = *s_.flat;
    algorithms::Algorithm& algorithm = *s_.algorithm;
    flat.zero_grads();
    flat.params_to_device();
    const torch::Tensor y = y_.to(s_.device);
    const torch::Tensor logits = s_.model->forward(x_.to(s_.device));
    const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    const double value = loss.item<double>();
    if (std::isfinite(value)) {
      algorithm.begin_backward(flat.grads());
      loss.backward();
      if (iteration == 0) flat.check_grads_in_place();
      // An algorithm overlapping backward was handed each gradient as it became ready.
      if (!algorithm.overlaps_backward()) flat.grads_to_host();
    }
    // A NaN or Inf would silently ruin the model (and, in a residual, never leave it): stop with
    // an error, or with skip-step leave this batch out: the rank contributes a zero gradient.
    // An algorithm overlapping backward has sent the gradient already; it keeps no residual,
    // and a non-finite synchronized update is skipped by update().
    if (!std::isfinite(value) || (skip_nonfinite_ && !algorithm.overlaps_backward() &&
                                  !std::isfinite(kernels::ops::squared_norm(flat.grads())))) {
      const std::string what =
          fmt::format("non-finite {} at iteration {} (loss {})",
                      std::isfinite(value) ? "gradient" : "loss", iteration, value);
      if (!skip_nonfinite_) throw std::runtime_error(what + kNonFiniteHint);
      skipped(what + ": this rank's batch is left out");
      flat.zero_grads();
    } else {
      const auto rows = static_cast<double>(labels_.size());  // samples, or tokens
      train_sums_[0] += value * rows;
      train_sums_[1] += logits.argmax(1).eq(y).sum().item<double>();
      train_sums_[2] += rows;
    }
    return value;
  }

  // The gradient and norm studies the algorithm took while synchronizing, kept for the record;
  // their time is not the update's.
  void take_studies(int epoch, long iteration, Stopwatch& phase) {
    if (std::optional<algorithms::GradStats> g = s_.algorithm->take_grad_stats()) {
      pending_grad_stats_.push_back(grad_stats_row(*g, iteration, epoch));
      phase.restart();
    }
    if (std::optional<algorithms::NormStudy> n = s_.algorithm->take_norm_study()) {
      pending_norm_study_.push_back({iteration, epoch, n->dense_norm, n->dense_std,
                                     n->selected_distance, n->randk_distance, n->bound});
    }
  }

  // The optimizer's step between the algorithm's before_step and after_step. After
  // synchronization the update is the same on every rank of a synchronous algorithm, so they all
  // stop, or skip, at the same step. Gossip ranks still mix (after_step), so that their exchanges
  // stay paired.
  void update(int epoch, long iteration) {
    const kernels::Buffer<float> params = s_.flat->params();
    s_.algorithm->before_step(params);
    const double lr = schedule_.lr(epoch, iteration, s_.iterations_per_epoch);
    if (!optimizer_.step(params, s_.flat->grads(), momentum(), lr)) {
      const std::string what =
          fmt::format("non-finite gradient at iteration {} after synchronization", iteration);
      if (!skip_nonfinite_) throw std::runtime_error(what + kNonFiniteHint);
      skipped(what + ": the update is skipped");
    }
    s_.algorithm->after_step(params);
  }

  // What the algorithm's communicator and its duplicates (its engine's) moved during the
  // iteration, counted by the communicator whatever the algorithm counts itself, less its
  // studies' traffic.
  static void add_traffic(IterationSample& sample, const comm::Traffic& before,
                          const comm::Traffic& after,
                          const algorithms::AlgorithmStats& stats_before,
                          const algorithms::AlgorithmStats& stats_after) {
    sample.bytes_sent =
        static_cast<double>((after.bytes_sent - before.bytes_sent) -
                            (stats_after.measure_bytes_sent - stats_before.measure_bytes_sent));
    sample.bytes_received = static_cast<double>(
        (after.bytes_received - before.bytes_received) -
        (stats_after.measure_bytes_received - stats_before.measure_bytes_received));
  }

  static double training_thread_seconds(const algorithms::AlgorithmStats& s) {
    return s.select_seconds + s.communicate_seconds + s.wait_seconds;
  }

  // What the algorithm counted during the step: its phases and achieved density.
  static void add_algorithm_figures(IterationSample& sample,
                                    const algorithms::AlgorithmStats& before,
                                    const algorithms::AlgorithmStats& after) {
    sample.select_s = after.select_seconds - before.select_seconds;
    sample.communicate_s = after.communicate_seconds - before.communicate_seconds;
    sample.wait_s = after.wait_seconds - before.wait_seconds;
    sample.overlapped_communicate_s = after.overlapped_seconds - before.overlapped_seconds;
    const auto offered = static_cast<double>(after.entries_offered - before.entries_offered);
    const auto sent = static_cast<double>(after.entries_sent - before.entries_sent);
    sample.density = offered > 0 ? sent / offered : 0.0;
  }

  // Rank 0's module buffers on every rank, through host memory over MPI whatever the device: a
  // communication thread may have device collectives in flight now (osgp's exchange, adpsgd's
  // gossip), and NCCL promises no progress to two communicators' at once on one GPU
  // (docs/design.md, "Device rules").
  void share_rank0_buffers() {
    s_.flat->buffers_to_host();
    std::vector<float> values = s_.flat->buffers_on_host();
    comm_.broadcast(std::span(values), 0);
    s_.flat->set_buffers(values);
    s_.flat->buffers_to_device();
  }

  Evaluation end_epoch(int epoch, long iterations_done, double samples_per_second) {
    comm_.allreduce(std::span(train_sums_), comm::ReduceOp::sum);
    const bool local = o_.eval_model == EvalModel::local;
    if (!local) share_rank0_buffers();  // evaluate rank 0's batch-norm statistics everywhere
    const Evaluation eval = evaluate_model(*s_.model, *s_.flat, *s_.algorithm, local, [&] {
      if (s_.validation_windows) {
        return evaluate_language_model(*s_.model, *s_.validation_windows, s_.device, comm_);
      }
      return s_.validation_streams
                 ? evaluate_language_model(*s_.model, *s_.validation_streams, o_.eval_reset_state,
                                           s_.device, comm_)
                 : evaluate_classifier(*s_.model, *validation_reader_, s_.dataset,
                                       o_.eval_batch_size, local, s_.device, comm_);
    });
    const EpochReport report{epoch,
                             train_sums_[0] / train_sums_[2],
                             train_sums_[1] / train_sums_[2],
                             eval.loss,
                             eval.top1,
                             eval.top5,
                             eval.perplexity,
                             samples_per_second};
    train_sums_.fill(0.0);
    progress_.on_epoch(report, iterations_done);
    if (rank0_) {
      record::EpochRow row;
      row.epoch = epoch;
      row.train_loss = report.train_loss;
      row.train_acc = report.train_acc;
      row.val_loss = eval.loss;
      row.val_top1 = eval.top1;
      row.val_top5 = eval.top5;
      row.val_perplexity = eval.perplexity;
      row.consensus_distance = s_.algorithm->consensus_distance();
      row.wall_seconds = run_seconds();
      flush_steps();
      s_.db->add_epoch(s_.run.id, row);
    }
    return eval;
  }

  void record_steps(const std::vector<record::StepRow>& rows) {
    if (rank0_) pending_steps_.insert(pending_steps_.end(), rows.begin(), rows.end());
  }

  void flush_steps() {
    s_.db->add_steps(s_.run.id, pending_steps_);
    pending_steps_.clear();
    s_.db->add_grad_stats(s_.run.id, pending_grad_stats_);
    pending_grad_stats_.clear();
    s_.db->add_norm_study(s_.run.id, pending_norm_study_);
    pending_norm_study_.clear();
    last_flush_ = clock_.seconds();
  }

  const Options& o_;
  comm::Communicator& comm_;
  Setup& s_;
  StallWatchdog& watchdog_;
  const bool rank0_;
  const bool skip_nonfinite_;
  const long total_iterations_;
  const int epochs_;
  const LrSchedule schedule_;
  Progress progress_;
  StepMetrics metrics_;
  std::vector<record::StepRow> pending_steps_;
  std::vector<record::GradStatsRow> pending_grad_stats_;  // rank 0's, the only one measuring
  std::vector<record::NormStudyRow> pending_norm_study_;  // likewise
  std::array<double, 3> train_sums_{};  // loss·rows, correct, rows (samples or tokens) this epoch
  std::vector<float> features_;         // classifiers
  std::vector<std::int64_t> tokens_;    // language models
  std::vector<std::int64_t> labels_;    // classes, or the next tokens
  torch::Tensor x_, y_;                 // views of features_ or tokens_, and of labels_
  // Classifiers'. They read s_.dataset in place, so they live here, once Setup has its final
  // address.
  std::unique_ptr<data::BatchReader> train_reader_, validation_reader_;
  torch::Tensor momentum_;  // the optimizer's state, where the parameters are
  const SgdOptimizer optimizer_;
  const Stopwatch clock_;
  double last_flush_ = 0;
  TrainingPosition start_;  // where this process began: a checkpoint's position, or the start
  long last_checkpoint_step_ = 0;
  int stop_signal_ = 0;
  long skipped_ = 0;  // batches and updates left out by --on-nonfinite skip-step
};

}  // namespace

TrainingResult train(const Options& given, comm::Communicator& comm, const comm::Placement& where) {
  // This rank's share of the run begins now, before it loads data (the `ranks` table).
  const std::string started_at = record::utc_now_iso8601();
  // The waits of the set-up (NCCL's creation, the engines') are held to --comm-timeout too; the
  // stall watchdog keeps the limit once training starts.
  comm::set_wait_limit_seconds(wait_limit_for(given.comm_timeout, 0, 0, false));
  // From here on the options are the run's: --device auto resolved, as the record, the
  // computation hash and the checkpoints have it.
  std::optional<Options> resolved;
  set_up_together(comm, [&] { resolved.emplace(with_device_resolved(given, comm)); });
  const Options& o = *resolved;
  std::optional<Setup> setup;
  set_up_together(comm, [&] { setup.emplace(set_up(o, comm, where)); });
  Setup& s = *setup;
  // The options only: ranks on different nodes may differ in environment (interface names).
  // The model file's path may differ between nodes (a node-local copy): what it holds is compared
  // as the model's structure.
  nlohmann::json compared = o;
  compared.erase("model_file");
  check_ranks_agree(comm, stable_hash(compared.dump()), s.flat->params().size(),
                    stable_hash(s.model->structure()));
  const bool rank0 = comm.rank() == 0;
  std::optional<RankCheckpoint> resumed;
  if (o.resume.kind != ResumeFrom::Kind::nowhere) {
    set_up_together(comm, [&] {
      resumed = find_resume_checkpoint(o, comm);
      if (resumed) restore(*resumed, *s.flat, *s.algorithm);
    });
  }
  if (resumed) s.run.id = resumed->run_id;
  // Rank 0's id is the run's: the row to continue, and the row any rank that fails records in.
  comm.broadcast(s.run.id, 0);
  // Only now, with every rank known to agree, does a database file appear.
  set_up_together(comm, [&] {
    if (!rank0) return;
    const std::filesystem::path file = database_path(o, s.run.id);
    const record::FileSystem where = record::file_system_of(file);
    if (where.network && !o.quiet) {
      fmt::print(
          "commsgd-train: {} is on {}, a network file system: the record uses SQLite's "
          "rollback journal, not WAL\n",
          file.string(), where.name);
    }
    if (where.network && !o.db.empty())
      s.db_claim = std::make_unique<record::WriterClaim>(file, s.run.id);
    s.db.emplace(file, where);
    if (resumed) {
      // A peer's failure of the attempt before: folded now, before it could pass for this one's.
      record::fold_peer_failures(*s.db, file, s.run.id);
      s.db->resume_run(s.run.id, resumed->position.step, resumed->position.epoch);
    }
  });

  if (!resumed) {
    // One initial model for everyone, whatever each rank's RNG did.
    comm.broadcast(s.flat->params(), 0);
    comm.broadcast(s.flat->buffers(), 0);
    s.flat->buffers_to_device();
    if (rank0) s.db->begin_run(s.run);
  }
  const std::vector<record::RankRow> ranks_started = gather_ranks(comm, started_at, false);
  if (rank0) s.db->record_ranks(s.run.id, ranks_started);
  if (rank0) termination::record_run(database_path(o, s.run.id), s.run.id);
  if (!o.checkpoint_dir.empty()) termination::enable_stop_requests();
  // From here on, a wait on peers that does not end fails the run instead of hanging it.
  StallWatchdog watchdog(o.comm_timeout, comm, [&](const std::string& reason) {
    if (rank0) {
      termination::record_failure(fmt::format("rank 0: {}", reason));
    } else {
      record_peer_failure(o, s.run.id, comm.rank(), reason);
    }
  });
  try {
    s.algorithm->begin_training(s.flat->params());
    TrainingResult result = TrainingLoop(o, comm, s, resumed ? &*resumed : nullptr, watchdog).run();
    s.algorithm->end_training();
    const std::vector<record::RankRow> ranks_finished = gather_ranks(comm, started_at, true);
    if (rank0) s.db->record_ranks(s.run.id, ranks_finished);
    result.run_id = s.run.id;
    if (rank0) result.database = database_path(o, s.run.id);
    termination::stopped();
    if (result.stopped_by_signal != 0) return result;
    if (rank0) {
      if (!o.dump_params.empty()) write_params(o.dump_params, s.flat->params_on_host());
      const std::string note = result.skipped == 0
                                   ? ""
                                   : fmt::format(
                                         "{} batches or updates with non-finite values left "
                                         "out (--on-nonfinite skip-step)",
                                         result.skipped);
      if (const int late = termination::forget_run(); late == 0) {
        s.db->finish_run(s.run.id, record::RunStatus::completed, note);
      } else {
        s.db->complete_after_signal(
            s.run.id, fmt::format("SIG{} came after the last checkpoint opportunity; the run "
                                  "finished every iteration{}{}",
                                  sigabbrev_np(late), note.empty() ? "" : "; ", note));
      }
    }
    return result;
  } catch (const std::exception& e) {
    // Reported here, before unwinding destroys the algorithm: a comm thread that cannot stop
    // makes its destructor end the job.
    fmt::print(stderr, "commsgd-train: error: rank {}: {}\n", comm.rank(), e.what());
    if (rank0) {
      termination::forget_run();
      mark_failed(*s.db, database_path(o, s.run.id), s.run.id, e.what());
    } else {
      record_peer_failure(o, s.run.id, comm.rank(), e.what());
    }
    throw TrainingFailed(e.what());
  }
}

}  // namespace commsgd::trainer
