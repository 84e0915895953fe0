-- commsgd run database, schema version 1.
--
-- One SQLite file collects every training run and benchmark so that reports are SQL queries.
-- The trainer creates this schema, then applies each later version's step in order
-- (schema_v2.sql, ...), and stamps the file with PRAGMA user_version in the same transaction
-- (analysis/record/run_database.cpp). New files and old ones take the same steps, so a change
-- is a new step file, never an edit of what existing files already contain.
--
-- Conventions:
--   * timestamps are ISO-8601 UTC text, e.g. '2024-05-01T12:34:56.789Z' (sorts as text and
--     SQLite's date functions accept it);
--   * columns holding JSON are TEXT and NULL when there is nothing to store ('' is not JSON);
--   * a column is NOT NULL unless the value is genuinely optional (the C++ side uses
--     std::optional for exactly those).
-- Tables are not STRICT so that older sqlite3 shells on clusters can still open the file.
-- Per-run tables are WITHOUT ROWID: rows are clustered on (run_id, ...), so reading one run is
-- a contiguous range scan and the 36-byte run id is not stored a second time in a PK index.

-- One row per training run, inserted when the run starts and updated when it ends.
CREATE TABLE runs (
  id                  TEXT PRIMARY KEY,     -- random UUID v4
  created_at          TEXT NOT NULL,
  finished_at         TEXT,                 -- NULL while running (or if the process was killed)
  status              TEXT NOT NULL DEFAULT 'running'
                      CHECK (status IN ('running', 'completed', 'failed', 'preempted')),
  exit_reason         TEXT,                 -- free text: error message, signal, 'max epochs'
  -- what was run
  algo                TEXT NOT NULL,        -- --algo: 'dense', 'topk', 'gtopk', 'gaussiank', ...
  selector            TEXT NOT NULL,        -- sparse family: its --selector (as --help lists); else ''
  aggregation         TEXT NOT NULL,        -- sparse family: 'allgather', 'gtopk'; else ''
  topology            TEXT NOT NULL,
  model               TEXT NOT NULL,
  dataset             TEXT NOT NULL,
  -- where it ran
  workers             INTEGER NOT NULL,     -- total ranks
  nodes               INTEGER NOT NULL,
  network             TEXT NOT NULL,
  backend             TEXT NOT NULL,
  device              TEXT NOT NULL,
  -- hyper-parameters
  density             REAL,                 -- k/d of the selector; NULL for dense algorithms
  batch_size          INTEGER NOT NULL,     -- per worker
  lr                  REAL NOT NULL,
  epochs              INTEGER NOT NULL,     -- planned; count rows in `epochs` for completed ones
  seed                INTEGER NOT NULL,     -- uint64 stored as its int64 bit pattern
  config              TEXT,                 -- JSON: the full resolved configuration
  -- provenance
  git_revision        TEXT NOT NULL,
  host                TEXT NOT NULL,        -- host of rank 0
  slurm_job_id        TEXT,
  slurm_array_job_id  TEXT,
  slurm_array_task_id TEXT
);

-- Reports compare algorithms on one model/dataset; sweeps are found by their array job.
CREATE INDEX runs_by_experiment ON runs (model, dataset, algo, selector);
CREATE INDEX runs_by_array_job ON runs (slurm_array_job_id) WHERE slurm_array_job_id IS NOT NULL;

-- One row per finished epoch.
CREATE TABLE epochs (
  run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  epoch              INTEGER NOT NULL,
  train_loss         REAL NOT NULL,
  train_acc          REAL NOT NULL,
  val_loss           REAL NOT NULL,
  val_top1           REAL NOT NULL,
  val_top5           REAL,                  -- NULL where top-5 means nothing (few classes, LMs)
  val_perplexity     REAL,                  -- language models only
  wall_seconds       REAL NOT NULL,         -- cumulative since run start
  consensus_distance REAL,                  -- decentralised runs only: mean ||x_i - x_bar||^2
  PRIMARY KEY (run_id, epoch)
) WITHOUT ROWID;

-- Per-iteration timings and traffic, each aggregated over ranks as mean and max
-- (max is what the slowest rank, and so the step, paid). Seconds and bytes per step.
CREATE TABLE steps (
  run_id                  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step                    INTEGER NOT NULL,  -- global iteration, counting from run start
  epoch                   INTEGER NOT NULL,
  loss_mean               REAL NOT NULL,  loss_max               REAL NOT NULL,
  data_s_mean             REAL NOT NULL,  data_s_max             REAL NOT NULL,
  forward_backward_s_mean REAL NOT NULL,  forward_backward_s_max REAL NOT NULL,
  select_s_mean           REAL NOT NULL,  select_s_max           REAL NOT NULL,
  communicate_s_mean      REAL NOT NULL,  communicate_s_max      REAL NOT NULL,
  wait_s_mean             REAL NOT NULL,  wait_s_max             REAL NOT NULL,
  update_s_mean           REAL NOT NULL,  update_s_max           REAL NOT NULL,
  total_s_mean            REAL NOT NULL,  total_s_max            REAL NOT NULL,
  bytes_sent_mean         REAL NOT NULL,  bytes_sent_max         REAL NOT NULL,
  bytes_received_mean     REAL NOT NULL,  bytes_received_max     REAL NOT NULL,
  density_mean            REAL NOT NULL,  density_max            REAL NOT NULL,
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

-- Sampled measurements of the compressor against its theoretical contraction bound:
-- contraction = ||g - C(g)||^2 / ||g||^2 for top-k/random-k with k of d coordinates.
CREATE TABLE grad_stats (
  run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  epoch         INTEGER NOT NULL,
  contraction   REAL NOT NULL,
  bound_linear  REAL NOT NULL,   -- 1 - k/d
  bound_squared REAL NOT NULL,   -- (1 - k/d)^2
  histogram     TEXT,            -- JSON: magnitude histogram of the gradient
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

-- Micro-benchmarks, independent of runs: one row per measured value.
CREATE TABLE bench (
  id           INTEGER PRIMARY KEY,
  created_at   TEXT NOT NULL,
  suite        TEXT NOT NULL,   -- e.g. 'kernels', 'collectives', 'trainer-overhead'
  name         TEXT NOT NULL,
  params       TEXT,            -- JSON: sizes, dtype, ranks, ...
  value        REAL NOT NULL,
  unit         TEXT NOT NULL,   -- e.g. 's', 'GB/s'
  host         TEXT NOT NULL,
  machine      TEXT,            -- JSON: CPU/GPU/network description
  git_revision TEXT NOT NULL
);

-- Reports plot one benchmark's history over commits/time.
CREATE INDEX bench_by_name ON bench (suite, name, created_at);
