-- commsgd run database: schema version 2 to version 3.
--
-- Where and when each rank of a run ran, and its peak memory: one row per rank and attempt (a
-- run resumed from a checkpoint adds a row per rank each time it continues). started_at is when
-- the rank's process began the run, before it loaded data; finished_at and peak_rss_bytes (the
-- process's peak resident set, VmHWM) are filled in when the rank stops at the end of training
-- or at a checkpoint, and stay NULL for an attempt that failed or was killed. Runs whose ranks
-- shared a host at the same time measured each other's load: views.sql, run_overlaps.
CREATE TABLE ranks (
  run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  rank           INTEGER NOT NULL,
  started_at     TEXT NOT NULL,
  host           TEXT NOT NULL,
  finished_at    TEXT,
  peak_rss_bytes INTEGER,
  PRIMARY KEY (run_id, rank, started_at)
) WITHOUT ROWID;

CREATE INDEX ranks_by_host ON ranks (host, started_at);
