#include "analysis/record/run_figures.hpp"

#include <fmt/format.h>
#include <sqlite3.h>


#include "analysis/record/statement.hpp"

namespace commsgd::record {
namespace {

// The runs to refresh, in a TEMP table of the connection: every statement below reads it. These
// statements are not stored in the file, so unlike views.sql they may use window functions
// (SQLite 3.25 and later).
constexpr std::string_view kChosen = "SELECT id FROM temp.refresh_runs";

// A window is steady unless it is the run's first, or when it is also its last.
constexpr std::string_view kSteady = "(s.step > b.first_step OR s.step = b.last_step)";

std::string figures_sql(std::string_view schema) {
  return fmt::format(R"sql(
INSERT INTO {schema}.run_figures
WITH bounds AS (
  SELECT run_id, min(step) AS first_step, max(step) AS last_step
  FROM steps WHERE run_id IN ({chosen}) GROUP BY run_id
), step_figures AS (
  SELECT s.run_id, count(*) AS windows,
         avg(s.bytes_sent_mean) AS bytes_sent_per_step,
         avg(s.bytes_sent_max) AS bytes_sent_max_per_step,
         avg(s.bytes_received_mean) AS bytes_received_per_step,
         avg(s.bytes_received_max) AS bytes_received_max_per_step,
         avg(s.density_mean) AS achieved_density,
         sum({steady}) AS steady_windows,
         avg(CASE WHEN {steady} THEN s.data_s_mean END) AS data_s,
         avg(CASE WHEN {steady} THEN s.forward_backward_s_mean END) AS forward_backward_s,
         avg(CASE WHEN {steady} THEN s.select_s_mean END) AS select_s,
         avg(CASE WHEN {steady} THEN s.communicate_s_mean END) AS communicate_s,
         avg(CASE WHEN {steady} THEN s.wait_s_mean END) AS wait_s,
         avg(CASE WHEN {steady} THEN s.update_s_mean END) AS update_s,
         avg(CASE WHEN {steady} THEN s.total_s_mean END) AS total_s,
         avg(CASE WHEN {steady} THEN s.density_mean END) AS steady_density,
         avg(CASE WHEN {steady} THEN s.overlapped_communicate_s_mean END)
           AS overlapped_communicate_s
  FROM steps s JOIN bounds b ON b.run_id = s.run_id
  GROUP BY s.run_id
), steady AS (
  SELECT s.run_id, s.communicate_s_mean, s.wait_s_mean
  FROM steps s JOIN bounds b ON b.run_id = s.run_id WHERE {steady}
), communicate_ranked AS (
  SELECT run_id, communicate_s_mean AS x, count(*) OVER (PARTITION BY run_id) AS n,
         row_number() OVER (PARTITION BY run_id ORDER BY communicate_s_mean) AS i
  FROM steady
), wait_ranked AS (
  SELECT run_id, wait_s_mean AS x, count(*) OVER (PARTITION BY run_id) AS n,
         row_number() OVER (PARTITION BY run_id ORDER BY wait_s_mean) AS i
  FROM steady
), medians AS (  -- the middle value, or the mean of the middle two
  SELECT c.run_id, c.x AS communicate_s_median, w.x AS wait_s_median
  FROM (SELECT run_id, avg(x) AS x FROM communicate_ranked
        WHERE i IN ((n + 1) / 2, (n + 2) / 2) GROUP BY run_id) c
  JOIN (SELECT run_id, avg(x) AS x FROM wait_ranked
        WHERE i IN ((n + 1) / 2, (n + 2) / 2) GROUP BY run_id) w ON w.run_id = c.run_id
), epoch_runs AS (
  SELECT run_id, count(*) AS epochs_done, max(epoch) AS final_epoch,
         max(val_top1) AS best_val_top1, min(val_loss) AS best_val_loss,
         min(val_perplexity) AS best_val_perplexity
  FROM epochs WHERE run_id IN ({chosen}) GROUP BY run_id
), epoch_figures AS (
  SELECT p.*, e.train_loss, e.train_acc, e.val_loss, e.val_top1, e.val_top5, e.val_perplexity,
         e.wall_seconds,
         (SELECT min(f.epoch) FROM epochs f
          WHERE f.run_id = p.run_id AND f.val_top1 = p.best_val_top1) AS best_epoch
  FROM epoch_runs p JOIN epochs e ON e.run_id = p.run_id AND e.epoch = p.final_epoch
), rank_peaks AS (
  SELECT run_id, rank, max(peak_rss_bytes) AS peak_rss_bytes
  FROM ranks WHERE run_id IN ({chosen}) GROUP BY run_id, rank
), memory AS (
  SELECT run_id, count(*) AS ranks, max(peak_rss_bytes) AS peak_rss_max_bytes,
         avg(peak_rss_bytes) AS peak_rss_mean_bytes
  FROM rank_peaks GROUP BY run_id
)
SELECT r.id, s.windows, s.bytes_sent_per_step, s.bytes_sent_max_per_step,
       s.bytes_received_per_step, s.bytes_received_max_per_step, s.achieved_density,
       s.steady_windows, s.data_s, s.forward_backward_s, s.select_s, s.communicate_s, s.wait_s,
       s.update_s, s.total_s, s.steady_density, d.communicate_s_median, d.wait_s_median,
       e.epochs_done, e.final_epoch, e.train_loss, e.train_acc, e.val_loss, e.val_top1,
       e.val_top5, e.val_perplexity, e.wall_seconds, e.best_val_top1, e.best_epoch,
       e.best_val_loss, e.best_val_perplexity,
       m.ranks, m.peak_rss_max_bytes, m.peak_rss_mean_bytes, s.overlapped_communicate_s
FROM runs r
LEFT JOIN step_figures s ON s.run_id = r.id
LEFT JOIN medians d ON d.run_id = r.id
LEFT JOIN epoch_figures e ON e.run_id = r.id
LEFT JOIN memory m ON m.run_id = r.id
WHERE r.id IN ({chosen}))sql",
                     fmt::arg("schema", schema), fmt::arg("chosen", kChosen),
                     fmt::arg("steady", kSteady));
}

// A rank's span ends at its finished_at, else its run's, else (still running) now, which SQLite
// holds fixed within a statement. Spans that ended are found from the chosen rank's side through
// the index on (host, started_at), starting no earlier than its start less the longest ended
// span (?1, in days); open spans, apart. The
// CROSS JOINs keep SQLite to that order. Each pair is found from the chosen run's side; the
// reverse pairs are added after.
std::string overlaps_sql(std::string_view schema) {
  return fmt::format(R"sql(
INSERT OR IGNORE INTO {schema}.run_overlaps (run_id, other_run_id, host)
SELECT a.run_id, b.run_id, a.host
FROM temp.refresh_runs c
CROSS JOIN ranks a ON a.run_id = c.id
CROSS JOIN runs ra ON ra.id = a.run_id
CROSS JOIN ranks b ON b.host = a.host
  AND b.started_at < coalesce(a.finished_at, ra.finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  AND b.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', julianday(a.started_at) - ?1)
CROSS JOIN runs rb ON rb.id = b.run_id
WHERE b.run_id <> a.run_id AND coalesce(b.finished_at, rb.finished_at) IS NOT NULL
  AND a.started_at < coalesce(b.finished_at, rb.finished_at)
UNION ALL
SELECT a.run_id, b.run_id, a.host
FROM (SELECT k.* FROM ranks k JOIN runs r ON r.id = k.run_id
      WHERE k.finished_at IS NULL AND r.finished_at IS NULL) b
CROSS JOIN ranks a ON a.host = b.host
CROSS JOIN runs ra ON ra.id = a.run_id
WHERE a.run_id IN ({chosen}) AND b.run_id <> a.run_id
  AND b.started_at < coalesce(a.finished_at, ra.finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))sql",
                     fmt::arg("schema", schema), fmt::arg("chosen", kChosen));
}

// The longest span that ended, in days, with a second to spare for the rounding of the bound to
// milliseconds; 0 when none has.
double longest_span_days(sqlite3* db, std::string_view file) {
  Statement longest(db, file, "longest rank span", R"sql(
    SELECT max(julianday(coalesce(k.finished_at, r.finished_at)) - julianday(k.started_at))
    FROM ranks k JOIN runs r ON r.id = k.run_id
    WHERE coalesce(k.finished_at, r.finished_at) IS NOT NULL)sql");
  longest.bind().step();
  return longest.column_double(0) + 1.0 / 86400;
}

// Both tables' rows of the runs listed in temp.refresh_runs.
void refresh_chosen(sqlite3* db, std::string_view file, FigureTables tables) {
  const std::string_view schema = tables == FigureTables::main ? "main" : "temp";
  exec(db, file,
       fmt::format("DELETE FROM {0}.run_figures WHERE run_id IN ({1}); "
                   "DELETE FROM {0}.run_overlaps WHERE run_id IN ({1}) OR other_run_id IN ({1})",
                   schema, kChosen)
           .c_str(),
       "clear run figures");
  exec(db, file, figures_sql(schema).c_str(), "compute run figures");
  Statement pairs(db, file, "find run overlaps", overlaps_sql(schema));
  pairs.bind(longest_span_days(db, file)).execute();
  exec(db, file,
       fmt::format("INSERT OR IGNORE INTO {0}.run_overlaps (run_id, other_run_id, host) "
                   "SELECT other_run_id, run_id, host FROM {0}.run_overlaps WHERE run_id IN ({1})",
                   schema, kChosen)
           .c_str(),
       "find run overlaps");
}

void choose(sqlite3* db, std::string_view file, const std::string& fill_sql) {
  const std::string sql =
      "CREATE TEMP TABLE IF NOT EXISTS refresh_runs (id TEXT PRIMARY KEY); "
      "DELETE FROM temp.refresh_runs; " +
      fill_sql;
  exec(db, file, sql.c_str(), "choose runs to refresh");
}

}  // namespace

void refresh_run_figures(sqlite3* db, std::string_view file, std::span<const std::string> run_ids,
                         FigureTables tables) {
  if (run_ids.empty()) return;
  choose(db, file, "");
  Statement add(db, file, "choose runs to refresh",
                "INSERT OR IGNORE INTO temp.refresh_runs SELECT id FROM runs WHERE id = ?");
  for (const std::string& id : run_ids) add.bind(std::string_view(id)).execute();
  refresh_chosen(db, file, tables);
}

void refresh_all_run_figures(sqlite3* db, std::string_view file, FigureTables tables) {
  choose(db, file, "INSERT INTO temp.refresh_runs SELECT id FROM runs");
  refresh_chosen(db, file, tables);
}

}  // namespace commsgd::record
