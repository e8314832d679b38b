/**
 * @module harness/store/postgres/rows
 * The boundary between PostgreSQL rows and the store's records: every row read is
 * parsed with zod (bigint columns arrive as text and become numbers; jsonb arrives
 * parsed), then turned into a StoredJob or StoredWorker with absent fields left out. A
 * job row in the driver's plain shape takes a checked fast path to the same record
 * (plain-rows.ts).
 */
import * as z from 'zod';
import type { StoredJob, StoredWorker } from 'serverless-worker/internal';
import { plainStoredJob } from './plain-rows.js';
import { int, JobRow, optionalInt, REQUEST_COLUMN } from './row-schemas.js';

export { JobRow, REQUEST_COLUMN, requestJson } from './row-schemas.js';

/** Every column of sw_jobs that JobRow reads, for SELECT and RETURNING lists. */
export const JOB_COLUMNS =
  `endpoint_id, id, ${REQUEST_COLUMN}, sync, status, submitted_at, queued_at, started_at, ended_at, worker_id, output, error, retries, attempt, lost, ` +
  'result_from, cancelled_from, chunk_count, unread_count, expires_at, execution_deadline, execution_timeout_ms, retention_ms, delete_at, reported_at, ' +
  '(output IS NOT NULL) AS has_output';

/** The record of a row of sw_jobs, checked: by the plain shape's fast path when it fits (plain-rows.ts), else by zod. */
export function storedJobOf(row: unknown): StoredJob {
  return plainStoredJob(row) ?? toStoredJob(JobRow.parse(row));
}

/**
 * The record answered for a row: absent fields left out, as the memory store does. Built
 * by adding the present fields in one order (deleting absent ones from a literal would put
 * the object in V8's slow dictionary mode, for every reader after).
 */
export function toStoredJob(row: JobRow): StoredJob {
  const job: Record<string, unknown> = {};
  const put = (key: string, value: unknown): void => {
    if (value !== undefined) job[key] = value;
  };
  put('id', row.id);
  put('endpointId', row.endpoint_id);
  put('request', row.request);
  put('sync', row.sync);
  put('status', row.status);
  put('submittedAt', row.submitted_at);
  put('queuedAt', row.queued_at);
  put('startedAt', row.started_at);
  put('endedAt', row.ended_at);
  put('workerId', row.worker_id);
  put('output', row.has_output ? row.output : undefined);
  put('error', row.error ?? undefined);
  put('retries', row.retries);
  put('attempt', row.attempt);
  put('lost', row.lost);
  put('resultFrom', row.result_from ? { workerId: row.result_from.workerId ?? undefined, attempt: row.result_from.attempt } : undefined);
  put('cancelledFrom', row.cancelled_from);
  put('chunkCount', row.chunk_count);
  put('unreadChunkCount', row.unread_count);
  put('expiresAt', row.expires_at);
  put('executionDeadline', row.execution_deadline);
  put('executionTimeoutMs', row.execution_timeout_ms);
  put('retentionMs', row.retention_ms);
  put('deleteAt', row.delete_at);
  put('reportedAt', row.reported_at);
  return job as unknown as StoredJob;
}

export const WorkerRow = z.object({
  endpoint_id: z.string(),
  id: z.string(),
  first_seen_at: int,
  last_seen_at: int,
  initializing: z.boolean(),
  heartbeats: z.boolean(),
  ping_interval_ms: optionalInt,
  job_ids: z.array(z.string()).nullable(),
});

/** Worker columns plus the jobs it holds, in the order it took them (alias `w` for sw_workers). */
export const WORKER_COLUMNS =
  'w.endpoint_id, w.id, w.first_seen_at, w.last_seen_at, w.initializing, w.heartbeats, w.ping_interval_ms, ' +
  "(SELECT array_agg(j.id ORDER BY j.started_at, j.queue_seq) FROM sw_jobs j WHERE j.endpoint_id = w.endpoint_id AND j.worker_id = w.id AND j.status = 'IN_PROGRESS') AS job_ids";

export function toStoredWorker(raw: unknown): StoredWorker {
  const row = WorkerRow.parse(raw);
  return {
    endpointId: row.endpoint_id,
    id: row.id,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
    jobIds: row.job_ids ?? [],
    initializing: row.initializing,
    heartbeats: row.heartbeats,
    ...(row.ping_interval_ms !== undefined ? { pingIntervalMs: row.ping_interval_ms } : {}),
  };
}
