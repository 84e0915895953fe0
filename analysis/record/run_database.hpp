// Run database: one SQLite file recording training runs (config, per-epoch and per-step metrics)
// and micro-benchmarks, so that reports are SQL queries. The schema is analysis/schema.sql,
// versioned with PRAGMA user_version; opening a file creates or upgrades it, and re-creates the
// views of analysis/views.sql with this build's definitions.
//
// Many trainers (e.g. a SLURM array) may write the same file at once: it is opened in WAL mode
// (the rollback journal on a network file system, file_system.hpp) with a 30 s busy timeout and
// every multi-row write is one IMMEDIATE transaction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "analysis/record/file_system.hpp"

struct sqlite3;

namespace commsgd::record {

// Any failure to open, create or write the database. what() is one line naming the file.
class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One field per `runs` column except the timestamps, status and exit_reason, which the
// database manages. Empty config_json is stored as NULL.
struct RunInfo {
  std::string id, algo, selector, aggregation, topology, model, dataset;
  int workers = 1, nodes = 1;
  std::string network, backend, device;
  std::optional<double> density;  // nullopt for dense algorithms
  int batch_size = 0;
  double lr = 0;
  int epochs = 0;
  std::uint64_t seed = 0;  // stored as its int64 bit pattern
  std::string config_json, git_revision, host;
  std::optional<std::string> slurm_job_id, slurm_array_job_id, slurm_array_task_id;
};

struct EpochRow {
  int epoch = 0;
  double train_loss = 0, train_acc = 0, val_loss = 0, val_top1 = 0;
  std::optional<double> val_top5, val_perplexity, consensus_distance;
  double wall_seconds = 0;  // cumulative since run start
};

// --grad-stats-every: rank 0's accumulated gradient at one step (docs/design.md, "Run record").
struct GradStatsRow {
  std::int64_t step = 0;
  int epoch = 0;
  double contraction = 0, bound_linear = 0, bound_squared = 0;
  std::string histogram_json;
};

struct NormStudyRow {
  std::int64_t step = 0;
  int epoch = 0;
  double dense_norm = 0, dense_std = 0, selected_distance = 0, randk_distance = 0, bound = 0;
};

// Where and when one rank ran (the `ranks` table); finished_at and peak_rss_bytes once it stopped.
struct RankRow {
  int rank = 0;
  std::string started_at, host;
  std::optional<std::string> finished_at;
  std::optional<std::int64_t> peak_rss_bytes;
};

// A per-step metric aggregated over ranks.
struct Stat {
  double mean = 0, max = 0;
};

struct StepRow {
  std::int64_t step = 0;  // global iteration
  int epoch = 0;
  Stat loss, data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, total_s,
      bytes_sent, bytes_received, density;
  // Another thread's communication, never a phase (schema version 5).
  Stat overlapped_communicate_s;
};

// Empty params_json / machine_json are stored as NULL.
struct BenchRow {
  std::string suite, name, params_json;
  double value = 0;
  std::string unit, host, machine_json, git_revision;
};

enum class RunStatus { running, completed, failed, preempted };

std::string_view to_string(RunStatus);  // the text stored in runs.status
std::string new_run_id();               // random UUID v4, lower-case text
std::string utc_now_iso8601();          // e.g. "2024-05-01T12:34:56.789Z"

// The SQL that takes a database from version v to v + 1 is schema_steps()[v]: schema.sql from
// an empty file to version 1, schema_v2.sql to 2, and so on. A new file takes every step.
std::span<const std::string_view> schema_steps();

class RunDatabase {
 public:
  static constexpr int kSchemaVersion = 5;

  // Opens or creates the file (and its parent directories), sets the journal mode for the file
  // system it lies on (`where`; by default file_system_of(file)), a 30 s busy timeout and foreign
  // keys, then creates or migrates the schema and re-creates the views. Refuses files that are
  // not SQLite, are SQLite but not ours, or have a newer schema than this build.
  explicit RunDatabase(const std::filesystem::path& file);
  RunDatabase(const std::filesystem::path& file, const FileSystem& where);
  RunDatabase(RunDatabase&&) noexcept = default;
  RunDatabase& operator=(RunDatabase&&) noexcept = default;
  ~RunDatabase() = default;

  void begin_run(const RunInfo& run);  // status 'running', created_at now
  void add_epoch(std::string_view run_id, const EpochRow& row);
  void add_steps(std::string_view run_id, std::span<const StepRow> rows);  // all or nothing
  void add_grad_stats(std::string_view run_id, std::span<const GradStatsRow> rows);  // likewise
  void add_norm_study(std::string_view run_id, std::span<const NormStudyRow> rows);  // likewise
  // Inserts the ranks' rows, or replaces those of the same rank and start: all or nothing.
  void record_ranks(std::string_view run_id, std::span<const RankRow> rows);
  // Ends a run that is still 'running' (status must not be running); sets finished_at now.
  void finish_run(std::string_view run_id, RunStatus status, std::string_view exit_reason);
  // A rank other than 0 failed at `at` (peer_failures.hpp): the run is `failed` with `reason` if
  // it was still running, or if it failed no earlier than that (rank 0's reason is then only the
  // consequence: the launcher's SIGTERM, a stalled collective). Returns whether the row changed.
  bool record_peer_failure(std::string_view run_id, std::string_view at, std::string_view reason);
  void add_bench(std::span<const BenchRow> rows);  // all or nothing, one created_at

  // Checkpoints. A run stopped by a signal after writing a checkpoint is `preempted`, whatever a
  // signal watcher recorded first (it cannot know a checkpoint will follow).
  void mark_preempted(std::string_view run_id, std::string_view exit_reason);
  // A signal came too late to stop the run at a checkpoint, and it finished every iteration: it
  // is `completed`, whatever the signal's watcher recorded ('failed' or 'preempted').
  void complete_after_signal(std::string_view run_id, std::string_view exit_reason);
  // A run continues from a checkpoint: back to 'running', and what it recorded after the
  // checkpoint (steps from `next_step`, epochs from `next_epoch`) is dropped, to be recorded
  // again. Refuses a run that is missing or already completed. One transaction.
  void resume_run(std::string_view run_id, long next_step, int next_epoch);

  int schema_version() const;  // PRAGMA user_version as stored in the file
  const FileSystem& file_system() const { return file_system_; }
  sqlite3* handle() { return db(); }  // for tests and report queries

 private:
  struct Close {
    void operator()(sqlite3* db) const noexcept;
  };
  sqlite3* db() const;   // throws on a moved-from object instead of crashing in sqlite
  void update_schema();  // create or migrate the tables, re-create the views: one transaction
  // The run's rows of run_figures and run_overlaps (run_figures.hpp), in the caller's
  // transaction; or, after a run's end was recorded on its own (a signal watcher may have time
  // for one UPDATE only), in a transaction of their own.
  void refresh_figures(std::string_view run_id);
  void refresh_figures_after_end(std::string_view run_id);
  static DatabaseError newer_schema(std::string_view file, int version);

  std::string file_;  // as given, for error messages
  FileSystem file_system_;
  std::unique_ptr<sqlite3, Close> db_;
};

}  // namespace commsgd::record
