-- The job store: endpoints, jobs, chunks, workers, counters.
CREATE TABLE sw_endpoints (
  id text PRIMARY KEY,
  default_execution_timeout_ms bigint
);
-- Counters since the endpoint was created, split over shards so that concurrent
-- completions on one endpoint do not queue on one row; /health sums the shards.
CREATE TABLE sw_counters (
  endpoint_id text NOT NULL,
  shard smallint NOT NULL,
  completed bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  retried bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (endpoint_id, shard)
);
CREATE SEQUENCE sw_queue_seq;
CREATE TABLE sw_jobs (
  endpoint_id text NOT NULL,
  id text NOT NULL,
  -- Submission order: newest first for the request list.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  -- Queue order: a new value each time the job enters the queue.
  queue_seq bigint NOT NULL DEFAULT nextval('sw_queue_seq'),
  request jsonb NOT NULL,
  sync boolean NOT NULL,
  status text NOT NULL,
  submitted_at bigint NOT NULL,
  queued_at bigint NOT NULL,
  started_at bigint,
  ended_at bigint,
  worker_id text,
  output jsonb,
  error jsonb,
  retries integer NOT NULL DEFAULT 0,
  attempt integer NOT NULL DEFAULT 0,
  lost integer NOT NULL DEFAULT 0,
  result_from jsonb,
  chunk_count integer NOT NULL DEFAULT 0,
  unread_count integer NOT NULL DEFAULT 0,
  expires_at bigint NOT NULL,
  execution_deadline bigint,
  execution_timeout_ms bigint,
  retention_ms bigint NOT NULL,
  delete_at bigint,
  reported_at bigint,
  PRIMARY KEY (endpoint_id, id)
);
-- take: the oldest queued jobs of an endpoint (FOR UPDATE SKIP LOCKED).
CREATE INDEX sw_jobs_queue ON sw_jobs (endpoint_id, queue_seq) WHERE status = 'IN_QUEUE';
-- list: newest first, all states or some.
CREATE INDEX sw_jobs_newest ON sw_jobs (endpoint_id, seq DESC);
CREATE INDEX sw_jobs_state_newest ON sw_jobs (endpoint_id, status, seq DESC);
-- applyDue / nextDueAt: each time rule's deadline.
CREATE INDEX sw_jobs_expires ON sw_jobs (expires_at);
CREATE INDEX sw_jobs_execution ON sw_jobs (execution_deadline) WHERE execution_deadline IS NOT NULL;
CREATE INDEX sw_jobs_delete ON sw_jobs (delete_at) WHERE delete_at IS NOT NULL;
-- a worker's jobs (presence, requeue of a gone worker's jobs).
CREATE INDEX sw_jobs_worker ON sw_jobs (endpoint_id, worker_id) WHERE worker_id IS NOT NULL;
CREATE TABLE sw_chunks (
  endpoint_id text NOT NULL,
  job_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  chunk jsonb NOT NULL,
  PRIMARY KEY (endpoint_id, job_id, seq),
  FOREIGN KEY (endpoint_id, job_id) REFERENCES sw_jobs (endpoint_id, id) ON DELETE CASCADE
);
CREATE TABLE sw_workers (
  endpoint_id text NOT NULL,
  id text NOT NULL,
  first_seen_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  initializing boolean NOT NULL DEFAULT false,
  heartbeats boolean NOT NULL DEFAULT false,
  ping_interval_ms bigint,
  PRIMARY KEY (endpoint_id, id)
);
-- sweepSilentWorkers: workers with heartbeats, by last heard of.
CREATE INDEX sw_workers_silent ON sw_workers (last_seen_at) WHERE heartbeats;
