/**
 * @module harness/store/postgres/queue
 * The queue's two hot statements, each one round trip: submit (the endpoints when
 * missing, the jobs: submissions made together go in one statement, see coalescer.ts)
 * and take (worker presence, the claim of the oldest queued jobs with `FOR UPDATE SKIP
 * LOCKED`: exactly one taker per job across processes). Their events go to other
 * processes in the statement itself while one listens (statement-notices.ts).
 */
import type postgres from 'postgres';
import { EXECUTION_TIMEOUT_MS, type StoreEvent } from 'serverless-worker/internal';
import { type ClaimedJob, plainClaimedJob } from './plain-rows.js';
import { ClaimedRow } from './row-schemas.js';
import { JOB_COLUMNS, toStoredJob } from './rows.js';
import { CHANNEL } from './notifications.js';
import { notifySql } from './statement-notices.js';

export { ClaimedRow } from './row-schemas.js';
export type { ClaimedJob } from './plain-rows.js';

/** PostgreSQL's oid of text: the jobs' JSON goes as text and is cast (a json parameter would be stringified again by the driver). */
const TEXT_OID = 25;

export interface NewJob {
  readonly endpointId: string;
  readonly id: string;
  /** The request's JSON text (requestJsonText). */
  readonly requestText: string;
  /** Its policy's execution timeout, when it has one. */
  readonly policyTimeoutMs: number | undefined;
  readonly sync: boolean;
  readonly now: number;
  readonly expiresAt: number;
  readonly retentionMs: number;
  /** The events other harnesses are told of (in the statement, while one listens). */
  readonly told: readonly StoreEvent[];
}

/**
 * The jobs' fields but the request as one json parameter, an array of records (`o`: the
 * job's place, from 1). The requests go apart, as a text array: cast from text, a
 * request's JSON is kept byte for byte (json_to_recordset would re-read it).
 */
function jobsParameter(jobs: readonly NewJob[]): string {
  return JSON.stringify(
    jobs.map((job, index) => ({
      o: index + 1,
      e: job.endpointId,
      i: job.id,
      p: job.policyTimeoutMs ?? null,
      s: job.sync,
      n: job.now,
      x: job.expiresAt,
      k: job.retentionMs,
    })),
  );
}

/**
 * Insert queued jobs, in their order (the queue's order), in one statement (the
 * endpoints when missing, and the jobs); answers their ids, in no particular order (the
 * caller has the rest: the records are built, not read back).
 */
export function insertJobs(sql: postgres.Sql, jobs: readonly NewJob[], payloads: readonly string[] = []): postgres.PendingQuery<postgres.Row[]> {
  // The events of the submissions, notified in this statement while another harness listens (statement-notices.ts).
  const notified =
    payloads.length > 0
      ? sql`, notified AS (SELECT count(pg_notify(${CHANNEL}, p)) AS sent FROM unnest(${sql.array([...payloads], TEXT_OID)}::text[]) AS p)`
      : sql``;
  return sql`
    WITH new AS (
      SELECT t.*, request.r FROM json_to_recordset(${sql.typed(jobsParameter(jobs), TEXT_OID)}::json)
        AS t(o bigint, e text, i text, p bigint, s boolean, n bigint, x bigint, k bigint)
      JOIN unnest(${sql.array(
        jobs.map((job) => job.requestText),
        TEXT_OID,
      )}::text[]) WITH ORDINALITY AS request(r, o) ON request.o = t.o
    ),
    endpoint AS (INSERT INTO sw_endpoints (id) SELECT DISTINCT e FROM new ON CONFLICT (id) DO NOTHING),
    job AS (
      INSERT INTO sw_jobs (endpoint_id, id, request, policy_timeout_ms, sync, status, submitted_at, queued_at, expires_at, retention_ms)
      SELECT e, i, r::json, p, s, 'IN_QUEUE', n, n, x, k FROM new ORDER BY o
      RETURNING id
    ) ${notified}
    SELECT id FROM job ${payloads.length > 0 ? sql`, notified` : sql``}`;
}

/** A claimed row, checked: by the plain shape's fast path when it fits (plain-rows.ts), else by zod. */
export function parseClaimedRow(row: unknown): ClaimedJob {
  return plainClaimedJob(row) ?? claimedOf(ClaimedRow.parse(row));
}

/** The claimed job of a row zod parsed. */
export function claimedOf(row: ClaimedRow): ClaimedJob {
  return { job: toStoredJob(row), queueSeq: row.queue_seq, ctid: row.ctid, due: row.started_at + row.execution_timeout_ms };
}

/**
 * What the claim answers of each job: its whole row after the claim (the store builds the ended
 * job from it when its result is written: completion.ts), its place in the queue and its row's place.
 */
const TAKEN_COLUMNS = `${JOB_COLUMNS}, queue_seq, ctid::text AS ctid`;

/** Touch the worker and claim up to `max` queued jobs for it (in no particular order: sort by queue_seq). */
export function claimJobs(
  sql: postgres.Sql,
  endpointId: string,
  workerId: string,
  max: number,
  now: number,
  writes: { readonly endpoint: boolean; readonly worker: boolean } = { endpoint: true, worker: true },
  notifyAs?: { readonly origin: string; readonly carried: readonly string[] },
): postgres.PendingQuery<postgres.Row[]> {
  // One statement (the hot path; long polls call it on every 'queued' event): the
  // endpoint when missing, the worker's presence, and the claim of the oldest queued
  // jobs that no other transaction holds. The claimed rows are updated by their place
  // (ctid) among the queued ones, not joined back on the job's key: the plan PostgreSQL
  // caches for this statement is made while the table is small (a fresh database, no
  // statistics yet), and the join's plan then read every job of the endpoint on each
  // take, slower with every job run until the table was analyzed (0.65 ms a take after
  // 1 000 jobs, 2.1 ms after 4 000, in a loop of submit, take, result; now 0.33-0.40 ms
  // throughout). The update names no other condition: `picked` locked each row as queued
  // (FOR UPDATE rechecks the condition on the row's newest version) and no other transaction
  // changes it until this one ends; a status condition let the planner read every queued
  // job of the endpoint through the queue's partial index and pick the claimed ones out by
  // ctid (statistics from a table still empty: 0.8-6.6 ms a claim of 33 with 3 000 queued,
  // up with the queue's depth), where a Tid Scan fetches them directly (0.1-0.3 ms).
  // The timeout: the job's policy, else the endpoint's default, else the platform's.
  // `writes`: the endpoint's insert is left out when the store knows it exists, the
  // worker's presence when this store wrote it less than a second ago (issue 33: each take
  // rewrote both rows).
  const endpoint = writes.endpoint ? sql`endpoint AS (INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING),` : sql``;
  const worker = writes.worker
    ? sql`worker AS (
      INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at) VALUES (${endpointId}, ${workerId}, ${now}, ${now})
      ON CONFLICT (endpoint_id, id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, initializing = false
    ),`
    : sql``;
  // While another harness listens (`notifyAs`: this store's origin, and the payloads of earlier statements it
  // carries), the claim's events go in this statement (statement-notices.ts): each job's 'changed' (IN_PROGRESS,
  // its deadline) and the worker's, as the taker builds them.
  const notified =
    notifyAs === undefined
      ? sql``
      : sql`, carried AS (SELECT c.payload FROM unnest(${sql.array([...notifyAs.carried], TEXT_OID)}::text[]) AS c(payload)),
    claimed_events AS (
      SELECT json_build_object('type', 'changed', 'endpointId', ${endpointId}::text, 'jobId', taken.id, 'status', 'IN_PROGRESS',
        'due', taken.started_at + taken.execution_timeout_ms)::text AS events FROM taken
      UNION ALL
      SELECT json_build_object('type', 'worker', 'endpointId', ${endpointId}::text, 'workerId', ${workerId}::text)::text WHERE EXISTS (SELECT 1 FROM taken)
    ),
    notified AS (${sql.unsafe(notifySql('claimed_events', 'claimed_events.events', notifyAs.origin, 'carried'))})`;
  return sql`
    WITH ${endpoint} ${worker}
    picked AS (
      SELECT ctid FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_QUEUE'
      ORDER BY queue_seq LIMIT ${Math.max(0, max)} FOR UPDATE SKIP LOCKED
    ),
    timeout AS (
      SELECT coalesce((SELECT default_execution_timeout_ms FROM sw_endpoints WHERE id = ${endpointId}), ${EXECUTION_TIMEOUT_MS.default}::bigint) AS ms
    ),
    taken AS (
      UPDATE sw_jobs j SET status = 'IN_PROGRESS', attempt = j.attempt + 1, worker_id = ${workerId}, started_at = ${now},
        execution_timeout_ms = coalesce(j.policy_timeout_ms, timeout.ms), execution_deadline = ${now} + coalesce(j.policy_timeout_ms, timeout.ms),
        reported_at = NULL
      FROM timeout WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked))
      RETURNING j.*, j.ctid
    )
    ${notified}
    SELECT ${sql.unsafe(TAKEN_COLUMNS)} FROM taken ${notifyAs === undefined ? sql`` : sql`, notified`}`;
}
