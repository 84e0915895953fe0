-- commsgd run database: schema version 4 to version 5.
--
-- Communication that a thread of its own ran while training went on (dense's gradient buckets
-- during backward, osgp's and adpsgd's exchanges) is a column of its own: hidden behind
-- computation, but for what the training thread waited for (wait_s), it is no phase of the
-- iteration, and the phases (data_s ... update_s, and the rest of total_s) add up to total_s.
-- Until version 4 it was counted in communicate_s, and sgp's and dpsgd's exchange in
-- communicate_s, wait_s and update_s at once: rows recorded before hold NULL here, and their
-- phases may add up to more than the step.
ALTER TABLE steps ADD COLUMN overlapped_communicate_s_mean REAL;
ALTER TABLE steps ADD COLUMN overlapped_communicate_s_max REAL;
-- The mean over the steady windows, as the phases'.
ALTER TABLE run_figures ADD COLUMN overlapped_communicate_s REAL;
