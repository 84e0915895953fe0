-- commsgd run database: schema version 1 (schema.sql) to version 2.
--
-- The gTop-k paper's norm study (commsgd-train --norm-study-every N, sparse algorithms): every N
-- iterations, how far the aggregated sparse update u lands from the dense aggregate x of the same
-- step, x = (1/P)·Σ_r (g_r + e_r). Rank 0 measures; one row per measured step. k is the count
-- rank 0 selected, d the gradient's entries.
CREATE TABLE norm_study (
  run_id            TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step              INTEGER NOT NULL,
  epoch             INTEGER NOT NULL,
  dense_norm        REAL NOT NULL,  -- ||x||
  dense_std         REAL NOT NULL,  -- standard deviation of x's entries
  selected_distance REAL NOT NULL,  -- ||x - u||: the algorithm's selection and aggregation
  randk_distance    REAL NOT NULL,  -- ||x - randk(x)||: k entries of x kept at random
  bound             REAL NOT NULL,  -- (1 - k/d)·||x||, as the paper's code computes it
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
