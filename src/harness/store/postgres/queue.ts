/**
 * @module harness/store/postgres/queue
 * The queue's two hot statements, each one round trip: submit (the endpoint when
 * missing, the job, its notification) and take (worker presence, the claim of the oldest
 * queued jobs with `FOR UPDATE SKIP LOCKED`: exactly one taker per job across
 * processes, and a notification per job taken). Notifications are sent at commit.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import { EXECUTION_TIMEOUT_MS, requestJsonText, type JobRequest } from '../../../job/index.js';
import { CHANNEL } from './notifications.js';
import { JOB_COLUMNS, REQUEST_COLUMN, requestJson } from './rows.js';

/**
 * JOB_COLUMNS with the request left out (NULL): the caller has it, and reading it back
 * would parse a large input on the event loop at every submission.
 */
/** PostgreSQL's oid of text: the request's JSON text goes as text and is cast (a json parameter would be stringified again by the driver). */
const TEXT_OID = 25;

const JOB_COLUMNS_BUT_REQUEST = JOB_COLUMNS.replace(REQUEST_COLUMN, 'NULL AS request');

export interface NewJob {
  readonly endpointId: string;
  readonly id: string;
  readonly request: JobRequest;
  readonly sync: boolean;
  readonly now: number;
  readonly expiresAt: number;
  readonly retentionMs: number;
}

/** Insert a queued job; answers its row (JOB_COLUMNS). `payload`: the notification of its 'queued' event. */
export function insertJob(sql: postgres.Sql, payload: string, job: NewJob): postgres.PendingQuery<postgres.Row[]> {
  const { endpointId, id, request, sync, now, expiresAt, retentionMs } = job;
  // One statement: the endpoint when missing, the job, and the notification (sent at commit).
  return sql`
    WITH endpoint AS (INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING),
    job AS (
      INSERT INTO sw_jobs (endpoint_id, id, request, policy_timeout_ms, sync, status, submitted_at, queued_at, expires_at, retention_ms)
      VALUES (${endpointId}, ${id}, ${sql.typed(requestJsonText(request), TEXT_OID)}::json, ${request.policy?.executionTimeout ?? null}, ${sync}, 'IN_QUEUE', ${now}, ${now}, ${expiresAt}, ${retentionMs})
      RETURNING ${sql.unsafe(JOB_COLUMNS_BUT_REQUEST)}
    )
    SELECT job.*, pg_notify(${CHANNEL}, ${payload}) FROM job`;
}

/** A claimed job as the take statement answers it (parsed at the boundary). */
export const ClaimedRow = z.object({
  id: z.string(),
  attempt: z.number().int(),
  /** As text (the take's `request::text`), a large input left as its text: the worker API sends it on unparsed. */
  request: requestJson,
  queue_seq: z.union([z.string(), z.number()]).transform(Number),
  // The attempt's facts, kept by the store for the result (completion.ts).
  started_at: z.union([z.string(), z.number()]).transform(Number),
  lost: z.number().int(),
  retries: z.number().int(),
  retention_ms: z.union([z.string(), z.number()]).transform(Number),
  execution_timeout_ms: z.union([z.string(), z.number()]).transform(Number),
});
export type ClaimedRow = z.infer<typeof ClaimedRow>;

/** Touch the worker and claim up to `max` queued jobs for it (in no particular order: sort by queue_seq). */
export function claimJobs(sql: postgres.Sql, origin: string, endpointId: string, workerId: string, max: number, now: number): postgres.PendingQuery<postgres.Row[]> {
  // One statement (the hot path; long polls call it on every 'queued' event): the
  // endpoint when missing, the worker's presence, the claim of the oldest queued jobs
  // that no other transaction holds, and a notification per job taken (sent at commit).
  return sql`
    WITH endpoint AS (INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING),
    worker AS (
      INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at) VALUES (${endpointId}, ${workerId}, ${now}, ${now})
      ON CONFLICT (endpoint_id, id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, initializing = false
    ),
    picked AS (
      SELECT id, coalesce(policy_timeout_ms,
        (SELECT default_execution_timeout_ms FROM sw_endpoints WHERE id = ${endpointId}), ${EXECUTION_TIMEOUT_MS.default}::bigint) AS timeout_ms
      FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_QUEUE'
      ORDER BY queue_seq LIMIT ${Math.max(0, max)} FOR UPDATE SKIP LOCKED
    ),
    taken AS (
      UPDATE sw_jobs j SET status = 'IN_PROGRESS', attempt = j.attempt + 1, worker_id = ${workerId}, started_at = ${now},
        execution_timeout_ms = picked.timeout_ms, execution_deadline = ${now} + picked.timeout_ms, reported_at = NULL
      FROM picked WHERE j.endpoint_id = ${endpointId} AND j.id = picked.id
      RETURNING j.id, j.attempt, j.request, j.queue_seq, j.started_at, j.lost, j.retries, j.retention_ms, j.execution_timeout_ms
    )
    SELECT taken.id, taken.attempt, taken.request::text AS request, taken.queue_seq, taken.started_at, taken.lost, taken.retries, taken.retention_ms, taken.execution_timeout_ms,
      pg_notify(${CHANNEL}, json_build_object('origin', ${origin}::text, 'events', json_build_array(
        json_build_object('type', 'changed', 'endpointId', ${endpointId}::text, 'jobId', taken.id, 'status', 'IN_PROGRESS', 'due', taken.started_at + taken.execution_timeout_ms),
        json_build_object('type', 'worker', 'endpointId', ${endpointId}::text, 'workerId', ${workerId}::text)))::text)
    FROM taken`;
}
