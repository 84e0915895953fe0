-- commsgd run database: schema version 3 to version 4.
--
-- What every report needs of a run, kept with the run instead of derived from its steps, epochs
-- and ranks on every query: a report over ten thousand runs reads ten thousand rows, not a million
-- steps. The writer keeps both tables current (analysis/record/run_figures.*): a run's rows are
-- recomputed whenever its steps, epochs, ranks or end are recorded, and this step computes them
-- for the runs a file already holds. The views (views.sql) read them; analysis/README.md defines
-- every number.

DROP VIEW IF EXISTS run_overlaps;  -- a table from this version on

-- One row per run. "Steady" windows are every --log-every window of the run but its first, which
-- pays for warm-up; a run with a single window keeps it. A group of columns is NULL when the run
-- has no rows of its kind (no steps, no epochs, no ranks), as a join with none would be.
CREATE TABLE run_figures (
  run_id                      TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  -- steps: every window (traffic has no warm-up)
  windows                     INTEGER,
  bytes_sent_per_step         REAL,
  bytes_sent_max_per_step     REAL,
  bytes_received_per_step     REAL,
  bytes_received_max_per_step REAL,
  achieved_density            REAL,
  -- steps: the steady windows, each counting once; seconds per iteration by phase
  steady_windows              INTEGER,
  data_s                      REAL,
  forward_backward_s          REAL,
  select_s                    REAL,
  communicate_s               REAL,
  wait_s                      REAL,
  update_s                    REAL,
  total_s                     REAL,
  steady_density              REAL,
  communicate_s_median        REAL,  -- the medians of the steady windows' communicate_s_mean
  wait_s_median               REAL,  -- and wait_s_mean: what simulate check compares
  -- epochs: the last one recorded, and the best over all
  epochs_done                 INTEGER,
  final_epoch                 INTEGER,
  final_train_loss            REAL,
  final_train_acc             REAL,
  final_val_loss              REAL,
  final_val_top1              REAL,
  final_val_top5              REAL,
  final_val_perplexity        REAL,
  wall_seconds                REAL,
  best_val_top1               REAL,
  best_epoch                  INTEGER,  -- the first epoch with the best top-1
  best_val_loss               REAL,
  best_val_perplexity         REAL,
  -- ranks: peak resident memory, each rank's largest over its attempts
  ranks                       INTEGER,  -- how many ranks have rows
  peak_rss_max_bytes          INTEGER,
  peak_rss_mean_bytes         REAL
) WITHOUT ROWID;

-- Pairs of runs that ran on one host at the same time: a rank of each on the host, their spans
-- (started_at to finished_at; a span that never finished lasts until its run's finished_at, or
-- until the pair was recorded while the run was running) intersecting. Both orders are stored.
-- Whatever either measured, the other's load was in it. Until version 3 this was a view.
CREATE TABLE run_overlaps (
  run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  other_run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host         TEXT NOT NULL,
  PRIMARY KEY (run_id, other_run_id, host)
) WITHOUT ROWID;

CREATE INDEX run_overlaps_by_other ON run_overlaps (other_run_id);
