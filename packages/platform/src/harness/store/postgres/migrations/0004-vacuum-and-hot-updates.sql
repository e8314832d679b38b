-- The job store's churned tables (issue 33, item 4).
-- Worker presence is rewritten by takes and heartbeats: an index on last_seen_at made
-- every one of those updates write the index too (none was HOT: 4 748 dead rows for 16
-- live ones). Without it, and with room left in each page, an update that changes no
-- indexed column stays in its page (a HOT update) and is pruned there. The liveness sweep
-- reads the table instead of the index: it holds one row per worker.
DROP INDEX IF EXISTS sw_workers_silent;
ALTER TABLE sw_workers SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500);
-- Counter shards: updated on every result, a few rows: HOT room, vacuumed by row count.
ALTER TABLE sw_counters SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500);
-- Jobs: each is inserted, updated two or three times and deleted; vacuumed and analyzed
-- after 2% of the table changed rather than the default 20% (a queue of 50 000 jobs
-- otherwise waits 10 000 dead rows), and after inserts too (the planner's counts).
ALTER TABLE sw_jobs SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE sw_chunks SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000);
