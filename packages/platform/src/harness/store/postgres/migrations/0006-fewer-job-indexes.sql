-- The job store's indexes on sw_jobs, fewer (issue 33, item 4): every update that is
-- not HOT writes a new entry in each index whose predicate the new row matches, and a
-- job is inserted, taken, ended and deleted. 8 indexes -> 7, one of every job's entries
-- fewer (the largest index: 3.5 of 10.7 MB of indexes at 50 000 jobs). What each query
-- reads now (plans checked with EXPLAIN on 50 000 jobs: bench/store-plans.bench.ts):
-- - reads by id, locks, result writes: the primary key;
-- - take: sw_jobs_queue; ttl, retention, timeouts: sw_jobs_expires, sw_jobs_delete,
--   sw_jobs_execution (unchanged);
-- - the lists, newest or oldest first, any states: sw_jobs_newest; a list of some states
--   filters it (its total then reads the endpoint's rows, as the total of an unfiltered
--   list always did);
-- - /health's counts: sw_jobs_queue for the queued jobs, sw_jobs_running below for the
--   running ones and each worker's jobs.
-- sw_jobs_state_newest (endpoint, status, seq: every job, rewritten at each status
-- change) goes. sw_jobs_worker (worker_id IS NOT NULL: the jobs running) becomes
-- sw_jobs_running, the same rows under a predicate the running counts match.
DROP INDEX IF EXISTS sw_jobs_state_newest;
DROP INDEX IF EXISTS sw_jobs_worker;
CREATE INDEX IF NOT EXISTS sw_jobs_running ON sw_jobs (endpoint_id, worker_id) WHERE status = 'IN_PROGRESS';
-- Room in each page, so that the updates that change no indexed column (a heartbeat's
-- reported_at, progress output, stream chunk counts) stay in their page (HOT) and are
-- pruned there. Pages written from now on keep it.
ALTER TABLE sw_jobs SET (fillfactor = 85);
-- The maintenance check (store/postgres/maintenance-check.ts): when it last ran (the
-- database's clock), so that one harness of several runs each round, and the conditions
-- it warned of that were still true then (each is warned of once).
CREATE TABLE sw_maintenance (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  checked_at timestamptz NOT NULL DEFAULT '-infinity',
  warned text[] NOT NULL DEFAULT '{}'
);
INSERT INTO sw_maintenance DEFAULT VALUES;
