#include "analysis/record/run_database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <random>
#include <system_error>
#include <thread>

#include "analysis/record/run_figures.hpp"
#include "analysis/record/statement.hpp"
#include "analysis/record/views.hpp"
#include "commsgd/record/schema_sql.hpp"     // kSchemaSql, generated from analysis/schema.sql
#include "commsgd/record/schema_v2_sql.hpp"  // kSchemaV2Sql, from analysis/schema_v2.sql
#include "commsgd/record/schema_v3_sql.hpp"  // kSchemaV3Sql, from analysis/schema_v3.sql
#include "commsgd/record/schema_v4_sql.hpp"  // kSchemaV4Sql, from analysis/schema_v4.sql
#include "commsgd/record/schema_v5_sql.hpp"  // kSchemaV5Sql, from analysis/schema_v5.sql

namespace commsgd::record {
namespace {

// Writers from many processes queue on the lock this long before giving up.
constexpr std::chrono::milliseconds kBusyTimeout{30'000};

// Switching to or from WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// skipping the busy handler, when waiting could deadlock: e.g. several trainers opening a new file
// together. Retry for as long as the busy timeout; the mode is stored in the file, so this only
// happens once.
void set_journal_mode(sqlite3* db, std::string_view file, JournalMode mode) {
  const char* sql =
      mode == JournalMode::wal ? "PRAGMA journal_mode = WAL" : "PRAGMA journal_mode = DELETE";
  const auto deadline = std::chrono::steady_clock::now() + kBusyTimeout;
  while (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    if (sqlite3_errcode(db) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
      fail(file, sql, db);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// JSON columns hold NULL rather than '', which SQLite's json functions reject.
std::optional<std::string_view> json_or_null(std::string_view json) {
  if (json.empty()) return std::nullopt;
  return json;
}

}  // namespace

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::running:
      return "running";
    case RunStatus::completed:
      return "completed";
    case RunStatus::failed:
      return "failed";
    case RunStatus::preempted:
      return "preempted";
  }
  throw std::invalid_argument("invalid RunStatus");
}

std::span<const std::string_view> schema_steps() {
  static constexpr std::string_view steps[] = {kSchemaSql, kSchemaV2Sql, kSchemaV3Sql, kSchemaV4Sql,
                                               kSchemaV5Sql};
  static_assert(std::size(steps) == RunDatabase::kSchemaVersion);
  return steps;
}

std::string new_run_id() {
  // Fresh OS entropy per id, not a seeded PRNG: runs started at the same instant on different
  // nodes must not collide.
  std::random_device rd;
  unsigned char b[16];
  for (int i = 0; i < 16; i += 4) {
    std::uint32_t w = rd();
    for (int j = 0; j < 4; ++j) b[i + j] = static_cast<unsigned char>(w >> (8 * j));
  }
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // variant 10xx (RFC 4122)
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", b[i]);
  }
  return s;
}

std::string utc_now_iso8601() {
  using namespace std::chrono;
  auto now = floor<milliseconds>(system_clock::now());
  auto day = floor<days>(now);
  year_month_day ymd{day};
  hh_mm_ss hms{now - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", int(ymd.year()),
                     unsigned(ymd.month()), unsigned(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count(), hms.subseconds().count());
}

DatabaseError RunDatabase::newer_schema(std::string_view file, int version) {
  return DatabaseError(fmt::format("database {} has schema version {}, newer than this build ({})",
                                   file, version, kSchemaVersion));
}

void RunDatabase::Close::operator()(sqlite3* db) const noexcept {
  sqlite3_close_v2(db);
}

sqlite3* RunDatabase::db() const {
  if (!db_) throw std::logic_error("RunDatabase used after move");
  return db_.get();
}

RunDatabase::RunDatabase(const std::filesystem::path& file)
    : RunDatabase(file, file_system_of(file)) {}

RunDatabase::RunDatabase(const std::filesystem::path& file, const FileSystem& where)
    : file_(file.string()), file_system_(where) {
  if (file.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec)
      throw DatabaseError(fmt::format("{}: cannot create directory: {}", file_, ec.message()));
  }
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(file_.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  db_.reset(raw);  // sqlite returns a handle even on failure; it must be closed all the same
  if (rc != SQLITE_OK) fail(file_, "cannot open", raw);
  // READWRITE quietly degrades to read-only on a write-protected file; fail now, not mid-run.
  if (sqlite3_db_readonly(raw, "main") == 1)
    throw DatabaseError(fmt::format("{}: cannot open for writing (file is read-only)", file_));
  sqlite3_busy_timeout(raw, static_cast<int>(kBusyTimeout.count()));

  // The first statement that reads the file is where a non-SQLite file shows up; say so plainly
  // instead of sqlite's "file is not a database" deep inside some later pragma.
  int version = 0;
  try {
    version = schema_version();
  } catch (const DatabaseError&) {
    if (sqlite3_errcode(raw) == SQLITE_NOTADB)
      throw DatabaseError(fmt::format("{}: not an SQLite database", file_));
    throw;
  }
  if (version > kSchemaVersion) throw newer_schema(file_, version);

  set_journal_mode(raw, file_, journal_mode_for(where));
  exec(raw, file_, "PRAGMA foreign_keys = ON");  // off by default, per connection
  update_schema();
}

void RunDatabase::update_schema() {
  Transaction tx(db(), file_);
  // Re-read under the write lock: another process opening the same new file may have created
  // the schema while we waited, and must not be created twice.
  int version = schema_version();
  if (version > kSchemaVersion) throw newer_schema(file_, version);
  if (version == 0) {
    Statement objects(db(), file_, "inspect schema", "SELECT count(*) FROM sqlite_master");
    objects.bind().step();
    if (objects.column_int(0) != 0)
      throw DatabaseError(
          fmt::format("{}: has tables but no schema version; not a commsgd run database", file_));
  }
  const int found = version;
  for (; version < kSchemaVersion; ++version) {
    exec(db(), file_, std::string(schema_steps()[static_cast<std::size_t>(version)]).c_str(),
         version == 0 ? "create schema" : "migrate schema");
  }
  // Version 4 keeps each run's figures: computed here for the runs recorded before.
  if (found > 0 && found < 4) refresh_all_run_figures(db(), file_);
  // PRAGMAs take no bound parameters; the value is a compile-time constant.
  exec(db(), file_, fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
  // Views hold no data and are not versioned: every open brings them up to this build.
  install_views(db(), file_, ViewScope::persistent);
  tx.commit();
}

int RunDatabase::schema_version() const {
  Statement st(db(), file_, "read schema version", "PRAGMA user_version");
  st.bind().step();
  return static_cast<int>(st.column_int(0));
}

void RunDatabase::begin_run(const RunInfo& r) {
  if (r.id.empty()) throw std::invalid_argument("begin_run: empty run id");
  Statement st(db(), file_, "begin_run", R"sql(
    INSERT INTO runs (id, created_at, status, algo, selector, aggregation, topology, model,
                      dataset, workers, nodes, network, backend, device, density, batch_size, lr,
                      epochs, seed, config, git_revision, host, slurm_job_id, slurm_array_job_id,
                      slurm_array_task_id)
    VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  )sql");
  st.bind(r.id, utc_now_iso8601(), r.algo, r.selector, r.aggregation, r.topology, r.model,
          r.dataset, r.workers, r.nodes, r.network, r.backend, r.device, r.density, r.batch_size,
          r.lr, r.epochs, static_cast<std::int64_t>(r.seed), json_or_null(r.config_json),
          r.git_revision, r.host, r.slurm_job_id, r.slurm_array_job_id, r.slurm_array_task_id)
      .execute();
}

void RunDatabase::add_epoch(std::string_view run_id, const EpochRow& e) {
  Transaction tx(db(), file_);
  Statement st(db(), file_, "add_epoch", R"sql(
    INSERT INTO epochs (run_id, epoch, train_loss, train_acc, val_loss, val_top1, val_top5,
                        val_perplexity, wall_seconds, consensus_distance)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  st.bind(run_id, e.epoch, e.train_loss, e.train_acc, e.val_loss, e.val_top1, e.val_top5,
          e.val_perplexity, e.wall_seconds, e.consensus_distance)
      .execute();
  refresh_figures(run_id);
  tx.commit();
}

void RunDatabase::add_steps(std::string_view run_id, std::span<const StepRow> rows) {
  if (rows.empty()) return;
  Transaction tx(db(), file_);
  Statement st(db(), file_, "add_steps", R"sql(
    INSERT INTO steps (run_id, step, epoch,
                       loss_mean, loss_max, data_s_mean, data_s_max,
                       forward_backward_s_mean, forward_backward_s_max,
                       select_s_mean, select_s_max, communicate_s_mean, communicate_s_max,
                       wait_s_mean, wait_s_max, update_s_mean, update_s_max,
                       total_s_mean, total_s_max, bytes_sent_mean, bytes_sent_max,
                       bytes_received_mean, bytes_received_max, density_mean, density_max,
                       overlapped_communicate_s_mean, overlapped_communicate_s_max)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const StepRow& s : rows) {
    st.bind(run_id, s.step, s.epoch, s.loss, s.data_s, s.forward_backward_s, s.select_s,
            s.communicate_s, s.wait_s, s.update_s, s.total_s, s.bytes_sent, s.bytes_received,
            s.density, s.overlapped_communicate_s)
        .execute();
  }
  refresh_figures(run_id);
  tx.commit();
}

void RunDatabase::add_grad_stats(std::string_view run_id, std::span<const GradStatsRow> rows) {
  if (rows.empty()) return;
  Transaction tx(db(), file_);
  Statement st(db(), file_, "add_grad_stats", R"sql(
    INSERT INTO grad_stats (run_id, step, epoch, contraction, bound_linear, bound_squared,
                            histogram)
    VALUES (?, ?, ?, ?, ?, ?, ?))sql");
  for (const GradStatsRow& g : rows) {
    st.bind(run_id, g.step, g.epoch, g.contraction, g.bound_linear, g.bound_squared,
            json_or_null(g.histogram_json))
        .execute();
  }
  tx.commit();
}

void RunDatabase::record_ranks(std::string_view run_id, std::span<const RankRow> rows) {
  Transaction tx(db(), file_);
  Statement st(db(), file_, "record_ranks", R"sql(
    INSERT OR REPLACE INTO ranks (run_id, rank, started_at, host, finished_at, peak_rss_bytes)
    VALUES (?, ?, ?, ?, ?, ?))sql");
  for (const RankRow& r : rows) {
    st.bind(run_id, r.rank, r.started_at, r.host, r.finished_at, r.peak_rss_bytes).execute();
  }
  refresh_figures(run_id);
  tx.commit();
}

void RunDatabase::add_norm_study(std::string_view run_id, std::span<const NormStudyRow> rows) {
  if (rows.empty()) return;
  Transaction tx(db(), file_);
  Statement st(db(), file_, "add_norm_study", R"sql(
    INSERT INTO norm_study (run_id, step, epoch, dense_norm, dense_std, selected_distance,
                            randk_distance, bound)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const NormStudyRow& n : rows) {
    st.bind(run_id, n.step, n.epoch, n.dense_norm, n.dense_std, n.selected_distance,
            n.randk_distance, n.bound)
        .execute();
  }
  tx.commit();
}

void RunDatabase::finish_run(std::string_view run_id, RunStatus status,
                             std::string_view exit_reason) {
  if (status == RunStatus::running)
    throw std::invalid_argument("finish_run: final status cannot be 'running'");
  // Only a running run can finish: a late writer must not overwrite how a run ended.
  Statement st(db(), file_, "finish_run", R"sql(
    UPDATE runs SET status = ?, exit_reason = ?, finished_at = ?
    WHERE id = ? AND status = 'running')sql");
  st.bind(to_string(status), exit_reason, utc_now_iso8601(), run_id).execute();
  if (sqlite3_changes(db()) == 0)
    throw DatabaseError(fmt::format("{}: finish_run: no running run with id {}", file_, run_id));
  refresh_figures_after_end(run_id);
}

bool RunDatabase::record_peer_failure(std::string_view run_id, std::string_view at,
                                      std::string_view reason) {
  Statement st(db(), file_, "record_peer_failure", R"sql(
    UPDATE runs SET status = 'failed', exit_reason = ?1, finished_at = coalesce(finished_at, ?2)
    WHERE id = ?3 AND (status = 'running' OR (status = 'failed' AND finished_at >= ?2)))sql");
  st.bind(reason, at, run_id).execute();
  if (sqlite3_changes(db()) == 0) return false;
  refresh_figures_after_end(run_id);
  return true;
}

void RunDatabase::add_bench(std::span<const BenchRow> rows) {
  if (rows.empty()) return;
  Transaction tx(db(), file_);
  Statement st(db(), file_, "add_bench", R"sql(
    INSERT INTO bench (created_at, suite, name, params, value, unit, host, machine, git_revision)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  const std::string now = utc_now_iso8601();
  for (const BenchRow& b : rows) {
    st.bind(now, b.suite, b.name, json_or_null(b.params_json), b.value, b.unit, b.host,
            json_or_null(b.machine_json), b.git_revision)
        .execute();
  }
  tx.commit();
}

void RunDatabase::mark_preempted(std::string_view run_id, std::string_view exit_reason) {
  Statement st(db(), file_, "mark_preempted", R"sql(
    UPDATE runs SET status = 'preempted', exit_reason = ?, finished_at = ?
    WHERE id = ? AND status != 'completed')sql");
  st.bind(exit_reason, utc_now_iso8601(), run_id).execute();
  if (sqlite3_changes(db()) == 0) {
    throw DatabaseError(
        fmt::format("{}: mark_preempted: no unfinished run with id {}", file_, run_id));
  }
  refresh_figures_after_end(run_id);
}

void RunDatabase::complete_after_signal(std::string_view run_id, std::string_view exit_reason) {
  Statement st(db(), file_, "complete_after_signal", R"sql(
    UPDATE runs SET status = 'completed', exit_reason = ?, finished_at = ?
    WHERE id = ? AND status IN ('running', 'failed', 'preempted'))sql");
  st.bind(exit_reason, utc_now_iso8601(), run_id).execute();
  if (sqlite3_changes(db()) == 0) {
    throw DatabaseError(
        fmt::format("{}: complete_after_signal: no run with id {} to complete", file_, run_id));
  }
  refresh_figures_after_end(run_id);
}

void RunDatabase::resume_run(std::string_view run_id, long next_step, int next_epoch) {
  Transaction tx(db(), file_);
  Statement resume(db(), file_, "resume_run", R"sql(
    UPDATE runs SET status = 'running', exit_reason = NULL, finished_at = NULL
    WHERE id = ? AND status != 'completed')sql");
  resume.bind(run_id).execute();
  if (sqlite3_changes(db()) == 0) {
    throw DatabaseError(fmt::format(
        "{}: resume: run {} is not in this database, or it has completed", file_, run_id));
  }
  for (const char* table : {"steps", "grad_stats", "norm_study"}) {
    Statement steps(db(), file_, "resume_run",
                    fmt::format("DELETE FROM {} WHERE run_id = ? AND step >= ?", table));
    steps.bind(run_id, static_cast<std::int64_t>(next_step)).execute();
  }
  Statement epochs(db(), file_, "resume_run", "DELETE FROM epochs WHERE run_id = ? AND epoch >= ?");
  epochs.bind(run_id, static_cast<std::int64_t>(next_epoch)).execute();
  refresh_figures(run_id);
  tx.commit();
}

void RunDatabase::refresh_figures(std::string_view run_id) {
  const std::string id(run_id);
  refresh_run_figures(db(), file_, std::span(&id, 1));
}

void RunDatabase::refresh_figures_after_end(std::string_view run_id) {
  Transaction tx(db(), file_);
  refresh_figures(run_id);
  tx.commit();
}

}  // namespace commsgd::record
