-- analysis/views.sql as it was at schema version 3, when every view derived its numbers from the
-- steps, epochs and ranks on each query: tests/report/test_run_figures.cpp holds the views of
-- version 4, which read run_figures and run_overlaps, to these on every committed database.
-- A test oracle: not installed anywhere else.
-- commsgd views: the derived quantities every report asks for, defined once in SQL.
--
-- Views hold no data, so they are not part of the schema version: the trainer (RunDatabase) drops
-- and re-creates them each time it opens a database, so a file always carries the definitions of
-- the build that last wrote it; commsgd-report installs this build's definitions as TEMP views
-- on its own connection, so it reports with current definitions without writing the files it
-- reads (analysis/record/views.cpp).
--
-- Keep to SQL that old sqlite3 shells parse (no window functions, FILTER, IIF or ->>): SQLite
-- parses every view when it opens a file, so one unknown construct would make the whole file
-- unreadable there. Spell statements exactly "DROP VIEW IF EXISTS name" and "CREATE VIEW name":
-- the TEMP variant is derived from that spelling. Drop every view before creating any, and
-- create each after the views it reads.

DROP VIEW IF EXISTS run_summary;
DROP VIEW IF EXISTS run_memory;
DROP VIEW IF EXISTS run_overlaps;
DROP VIEW IF EXISTS communication_volume;
DROP VIEW IF EXISTS final_metrics;
DROP VIEW IF EXISTS time_to_accuracy;
DROP VIEW IF EXISTS time_breakdown;
DROP VIEW IF EXISTS scaling_efficiency;
DROP VIEW IF EXISTS throughput;
DROP VIEW IF EXISTS steady_steps;

-- The `steps` rows that measure the steady state: every --log-every window of a run except its
-- first, which pays for warm-up (allocations, first touches, connection set-up). A run with a
-- single window keeps it (its first window is also its last), rather than having no timing.
CREATE VIEW steady_steps AS
SELECT s.*
FROM steps s
WHERE s.step > (SELECT min(f.step) FROM steps f WHERE f.run_id = s.run_id)
   OR s.step = (SELECT max(l.step) FROM steps l WHERE l.run_id = s.run_id);

-- Training throughput of a run in samples per second over its steady state:
--   samples_per_s = workers * batch_size / step_s,
-- step_s being the mean over the steady windows (each window counts once) of total_s_mean, the
-- seconds per iteration averaged over the window's iterations and over the ranks.
CREATE VIEW throughput AS
SELECT r.id AS run_id, r.algo, r.selector, r.aggregation, r.model, r.dataset, r.network, r.device,
       r.workers, r.batch_size,
       count(*) AS windows,
       avg(s.total_s_mean) AS step_s,
       r.workers * r.batch_size / avg(s.total_s_mean) AS samples_per_s
FROM runs r
JOIN steady_steps s ON s.run_id = r.id
GROUP BY r.id;

-- Pairs of runs that ran on one host at the same time: a rank of each on the host, their spans
-- (started_at to finished_at; a span that never finished lasts until its run's finished_at, or
-- to now while the run is running) intersecting. Whatever either measured, the other's load was
-- in it; the reports mark such runs and leave them out of comparisons unless asked.
CREATE VIEW run_overlaps AS
WITH spans AS (
  SELECT k.run_id, k.host, k.started_at,
         coalesce(k.finished_at, r.finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
           AS finished_at
  FROM ranks k
  JOIN runs r ON r.id = k.run_id
)
SELECT a.run_id, b.run_id AS other_run_id, a.host
FROM spans a
JOIN spans b ON b.host = a.host AND b.run_id <> a.run_id
            AND a.started_at < b.finished_at AND b.started_at < a.finished_at
GROUP BY a.run_id, b.run_id, a.host;

-- Scaling efficiency: samples_per_s / (workers * baseline_samples_per_s), the baseline being
-- the single-worker throughput of the same model, dataset, network and device: the mean over
-- its 1-worker dense runs or, when it has none, over its 1-worker runs of any algorithm
-- (baseline_runs says how many), leaving out runs that shared a host with another run at the
-- same time (run_overlaps, above). Batch size is not part of the key: sweeps in the papers keep
-- the per-worker batch fixed (weak scaling). NULL when there is no such 1-worker run.
CREATE VIEW scaling_efficiency AS
WITH baseline AS (
  SELECT model, dataset, network, device,
         coalesce(avg(CASE WHEN algo = 'dense' THEN samples_per_s END),
                  avg(samples_per_s)) AS samples_per_s,
         coalesce(nullif(sum(algo = 'dense'), 0), count(*)) AS runs
  FROM throughput
  WHERE workers = 1 AND run_id NOT IN (SELECT run_id FROM run_overlaps)
  GROUP BY model, dataset, network, device
)
SELECT t.run_id, t.algo, t.selector, t.aggregation, t.model, t.dataset, t.network, t.device,
       t.workers, t.samples_per_s,
       b.samples_per_s AS baseline_samples_per_s,
       b.runs AS baseline_runs,
       t.samples_per_s / (t.workers * b.samples_per_s) AS scaling_efficiency
FROM throughput t
LEFT JOIN baseline b
  ON b.model = t.model AND b.dataset = t.dataset AND b.network = t.network AND b.device = t.device;

-- Where an iteration's time goes: mean seconds per iteration in each phase over the steady
-- state (as in `throughput`), and each phase's share of the total. other_s is the rest of the
-- total (gradient clipping, the algorithm's own bookkeeping), never negative.
CREATE VIEW time_breakdown AS
WITH phases AS (
  SELECT run_id,
         avg(data_s_mean) AS data_s,
         avg(forward_backward_s_mean) AS forward_backward_s,
         avg(select_s_mean) AS select_s,
         avg(communicate_s_mean) AS communicate_s,
         avg(wait_s_mean) AS wait_s,
         avg(update_s_mean) AS update_s,
         avg(total_s_mean) AS total_s
  FROM steady_steps
  GROUP BY run_id
), with_other AS (
  SELECT *, max(0.0, total_s - data_s - forward_backward_s - select_s - communicate_s - wait_s
                     - update_s) AS other_s
  FROM phases
)
SELECT run_id, data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, other_s,
       total_s,
       data_s / total_s AS data_share,
       forward_backward_s / total_s AS forward_backward_share,
       select_s / total_s AS select_share,
       communicate_s / total_s AS communicate_share,
       wait_s / total_s AS wait_share,
       update_s / total_s AS update_share,
       other_s / total_s AS other_share
FROM with_other;

-- One row per epoch at which a run's validation top-1 beat every earlier epoch of that run.
-- The time to reach accuracy A is the wall_seconds of the run's first row with val_top1 >= A:
--   SELECT run_id, min(wall_seconds) FROM time_to_accuracy WHERE val_top1 >= 0.9 GROUP BY run_id
CREATE VIEW time_to_accuracy AS
SELECT e.run_id, e.epoch, e.wall_seconds, e.val_top1
FROM epochs e
WHERE e.val_top1 > coalesce((SELECT max(p.val_top1) FROM epochs p
                             WHERE p.run_id = e.run_id AND p.epoch < e.epoch), -1);

-- The last recorded epoch of each run, and the best validation metrics over all its epochs
-- (highest top-1, lowest loss and perplexity); best_epoch is the first epoch with the best top-1.
CREATE VIEW final_metrics AS
WITH per_run AS (
  SELECT run_id, count(*) AS epochs_done, max(epoch) AS final_epoch,
         max(val_top1) AS best_val_top1, min(val_loss) AS best_val_loss,
         min(val_perplexity) AS best_val_perplexity
  FROM epochs
  GROUP BY run_id
)
SELECT p.run_id, p.epochs_done, p.final_epoch,
       e.train_loss AS final_train_loss, e.train_acc AS final_train_acc,
       e.val_loss AS final_val_loss, e.val_top1 AS final_val_top1, e.val_top5 AS final_val_top5,
       e.val_perplexity AS final_val_perplexity, e.wall_seconds,
       p.best_val_top1,
       (SELECT min(b.epoch) FROM epochs b
        WHERE b.run_id = p.run_id AND b.val_top1 = p.best_val_top1) AS best_epoch,
       p.best_val_loss, p.best_val_perplexity
FROM per_run p
JOIN epochs e ON e.run_id = p.run_id AND e.epoch = p.final_epoch;

-- Traffic per iteration and rank, averaged over all of a run's windows (traffic has no warm-up):
-- *_per_step is the mean over ranks, *_max_per_step what the busiest rank moved.
CREATE VIEW communication_volume AS
SELECT run_id,
       count(*) AS windows,
       avg(bytes_sent_mean) AS bytes_sent_per_step,
       avg(bytes_sent_max) AS bytes_sent_max_per_step,
       avg(bytes_received_mean) AS bytes_received_per_step,
       avg(bytes_received_max) AS bytes_received_max_per_step,
       avg(density_mean) AS achieved_density
FROM steps
GROUP BY run_id;

-- Peak resident memory of a run's ranks (each rank's largest over its attempts): the largest
-- and the mean over ranks, in bytes.
CREATE VIEW run_memory AS
WITH per_rank AS (
  SELECT run_id, rank, max(peak_rss_bytes) AS peak_rss_bytes
  FROM ranks
  GROUP BY run_id, rank
)
SELECT run_id, max(peak_rss_bytes) AS peak_rss_max_bytes,
       avg(peak_rss_bytes) AS peak_rss_mean_bytes
FROM per_rank
GROUP BY run_id;

-- One row per run: what was run, how it ended, and the headline numbers of the views above.
-- The list and comparison reports (and their --where filters) work on this view.
CREATE VIEW run_summary AS
SELECT r.id AS run_id, r.created_at, r.finished_at, r.status, r.algo, r.selector, r.aggregation,
       r.topology, r.model, r.dataset, r.workers, r.nodes, r.network, r.backend, r.device,
       r.density, r.batch_size, r.lr, r.epochs, r.git_revision, r.host, r.slurm_job_id,
       r.slurm_array_job_id, r.slurm_array_task_id,
       f.epochs_done, f.final_val_top1, f.best_val_top1, f.final_val_loss, f.wall_seconds,
       t.step_s, t.samples_per_s, e.scaling_efficiency,
       c.bytes_sent_per_step, c.bytes_received_per_step, c.achieved_density,
       m.peak_rss_max_bytes, m.peak_rss_mean_bytes,
       (SELECT group_concat(substr(o.other_run_id, 1, 8) || ' on ' || o.host, ', ')
        FROM run_overlaps o WHERE o.run_id = r.id) AS overlapped_by
FROM runs r
LEFT JOIN final_metrics f ON f.run_id = r.id
LEFT JOIN throughput t ON t.run_id = r.id
LEFT JOIN scaling_efficiency e ON e.run_id = r.id
LEFT JOIN communication_volume c ON c.run_id = r.id
LEFT JOIN run_memory m ON m.run_id = r.id;
