-- The three time rules in one index (issue 47, items 2 and 4). A job's ttl (expires_at),
-- execution timeout (execution_deadline) and retention (delete_at) each had an index, and
-- every update of a job that is not HOT (its take, its end) writes an entry in each index
-- whose predicate the new row matches: the ttl index took one at the submission, the take
-- and the end, the timeout index one at the take, the retention index one at the end
-- (5 of a job's 13 index entries). The time rules only ever ask for the rows whose first
-- deadline is due, so one index on that first deadline answers them all with one entry a
-- row version (3 a job): least() skips the deadlines a row does not have. Each rule reads
-- the index up to now and keeps its own rows (due-rules.ts); a row due by one rule that
-- another rule's statement reads is passed over, and its own statement of the same pass
-- takes it.
CREATE INDEX IF NOT EXISTS sw_jobs_due ON sw_jobs ((least(expires_at, execution_deadline, delete_at)));
DROP INDEX IF EXISTS sw_jobs_expires;
DROP INDEX IF EXISTS sw_jobs_execution;
DROP INDEX IF EXISTS sw_jobs_delete;
-- The planner's figures for the new expression, for a table that holds jobs (ANALYZE
-- collects an expression index's own; without them `least(...) <= now` is guessed at a
-- third of the rows). An empty table is analyzed by the store as it opens and grows
-- (fresh-statistics.ts).
DO $$ BEGIN
  IF EXISTS (SELECT FROM sw_jobs) THEN ANALYZE sw_jobs; END IF;
END $$;
