-- commsgd views: the derived quantities every report asks for, defined once in SQL. What they
-- need of each run is kept in the tables run_figures and run_overlaps (schema_v4.sql), computed
-- when the run is recorded (analysis/record/run_figures.*), so that no view aggregates the steps
-- of every run or pairs every rank of a host on each query.
--
-- Views hold no data, so they are not part of the schema version: the trainer (RunDatabase) drops
-- and re-creates them each time it opens a database, so a file always carries the definitions of
-- the build that last wrote it; commsgd-report installs this build's definitions as TEMP views
-- on its own connection, so it reports with current definitions without writing the files it
-- reads (analysis/record/views.cpp).
--
-- {baseline_algorithm} is the name of the algorithm comparisons measure against (S-SGD), filled
-- in when the views are installed from algorithms/baseline_algorithm.hpp: the catalog names
-- algorithms, the views do not.
--
-- Keep to SQL that old sqlite3 shells parse (no window functions, FILTER, IIF or ->>): SQLite
-- parses every view when it opens a file, so one unknown construct would make the whole file
-- unreadable there. Spell statements exactly "DROP VIEW IF EXISTS name" and "CREATE VIEW name":
-- the TEMP variant is derived from that spelling. Drop every view before creating any, and
-- create each after the views it reads.

DROP VIEW IF EXISTS run_summary;
DROP VIEW IF EXISTS run_memory;
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
-- run_figures' steady columns are made of the same windows.
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
       f.steady_windows AS windows,
       f.total_s AS step_s,
       r.workers * r.batch_size / f.total_s AS samples_per_s
FROM runs r
JOIN run_figures f ON f.run_id = r.id
WHERE f.steady_windows > 0;

-- Scaling efficiency: samples_per_s / (workers * baseline_samples_per_s), the baseline being
-- the single-worker throughput of the same model, dataset, network and device: the mean over
-- its 1-worker runs of the baseline algorithm or, when it has none, over its 1-worker runs of
-- any algorithm (baseline_runs says how many), leaving out runs that shared a host with another
-- run at the same time (the table run_overlaps). Batch size is not part of the key: sweeps in the
-- papers keep the per-worker batch fixed (weak scaling). NULL when there is no such 1-worker run.
CREATE VIEW scaling_efficiency AS
WITH baseline AS (
  SELECT model, dataset, network, device,
         coalesce(avg(CASE WHEN algo = '{baseline_algorithm}' THEN samples_per_s END),
                  avg(samples_per_s)) AS samples_per_s,
         coalesce(nullif(sum(algo = '{baseline_algorithm}'), 0), count(*)) AS runs
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

-- Where an iteration's time goes: mean seconds per iteration in each phase of the training
-- thread over the steady state (as in `throughput`), and each phase's share of the total. The
-- phases are its critical path and add up to total_s: other_s is the rest (the algorithm's
-- bookkeeping around its exchange: error feedback, copies), so the shares add up to 1.
-- overlapped_communicate_s is apart: what a thread of its own communicated while training went on
-- (dense's buckets, osgp, adpsgd), hidden behind computation but for what the training thread
-- waited for (wait_s); NULL for runs recorded before schema version 5, whose phases may add up to
-- more than the step (other_s negative).
CREATE VIEW time_breakdown AS
WITH with_other AS (
  SELECT run_id, data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, total_s,
         total_s - data_s - forward_backward_s - select_s - communicate_s - wait_s - update_s
           AS other_s,
         overlapped_communicate_s
  FROM run_figures
  WHERE steady_windows > 0
)
SELECT run_id, data_s, forward_backward_s, select_s, communicate_s, wait_s, update_s, other_s,
       total_s, overlapped_communicate_s,
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
SELECT run_id, epochs_done, final_epoch, final_train_loss, final_train_acc, final_val_loss,
       final_val_top1, final_val_top5, final_val_perplexity, wall_seconds, best_val_top1,
       best_epoch, best_val_loss, best_val_perplexity
FROM run_figures
WHERE epochs_done > 0;

-- Traffic per iteration and rank, averaged over all of a run's windows (traffic has no warm-up):
-- *_per_step is the mean over ranks, *_max_per_step what the busiest rank moved.
CREATE VIEW communication_volume AS
SELECT run_id, windows, bytes_sent_per_step, bytes_sent_max_per_step, bytes_received_per_step,
       bytes_received_max_per_step, achieved_density
FROM run_figures
WHERE windows > 0;

-- Peak resident memory of a run's ranks (each rank's largest over its attempts): the largest
-- and the mean over ranks, in bytes.
CREATE VIEW run_memory AS
SELECT run_id, peak_rss_max_bytes, peak_rss_mean_bytes
FROM run_figures
WHERE ranks > 0;

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
