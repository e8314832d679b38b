/**
 * @module harness/store/postgres/job-changes
 * The changes a transaction makes to one job, with the in-memory store's rules: a job is
 * read with its row locked (`FOR UPDATE`), changed as a plain record by the functions
 * here (end, requeue, delete: state table, counters, deadlines, stop orders), and
 * written back whole. Events, ended jobs and stops are collected in `Changes`; the store
 * sends the events at commit.
 */
import type postgres from 'postgres';
import { nextState, type JobErrorPayload, type JobTrigger } from '../../../job/index.js';
import { requeueLimitPayload } from '../../attempts.js';
import type { StopOrder, StoreEvent, StoredJob } from '../job-store.js';
import { CHANNEL } from './notifications.js';
import { JOB_COLUMNS, parseJobRow, toStoredJob } from './rows.js';

export type Tx = postgres.TransactionSql;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A job being changed in a transaction; `requeued` gives it a new place at the end of the queue when saved. */
export type TxJob = Mutable<StoredJob> & { requeued?: boolean };

/** What one call changed, collected while it runs. */
export interface Changes {
  readonly ended: StoredJob[];
  readonly stops: StopOrder[];
  readonly deleted: StoredJob[];
  readonly events: StoreEvent[];
  readonly counters: { completed: number; failed: number; retried: number };
  /** Endpoint of the counters. */
  countersEndpoint?: string;
}

export const newChanges = (): Changes => ({ ended: [], stops: [], deleted: [], events: [], counters: { completed: 0, failed: 0, retried: 0 } });

/** Shards of sw_counters (schema.ts). */
const COUNTER_SHARDS = 8;

/** The job with its row locked until the transaction ends, or undefined. */
export async function lockJob(tx: Tx, endpointId: string, jobId: string, skipLocked = false): Promise<TxJob | undefined> {
  const rows = skipLocked
    ? await tx`SELECT ${tx.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId} FOR UPDATE SKIP LOCKED`
    : await tx`SELECT ${tx.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId} FOR UPDATE`;
  const row = rows[0];
  return row ? { ...toStoredJob(parseJobRow(row)) } : undefined;
}

/** PostgreSQL's type oid of json (not jsonb, 3802): the text is kept as sent. */
const JSON_OID = 114;

/**
 * A json parameter, or NULL for undefined. Sent as json, not jsonb: jsonb refuses
 * \u0000 and lone surrogates, which JSON allows (schema.ts, migration 3).
 */
export function jsonb(tx: Tx | postgres.Sql, value: unknown): postgres.Parameter | null {
  return value === undefined ? null : (tx.typed(value as postgres.JSONValue, JSON_OID) as postgres.Parameter);
}

/** Write every field a change may touch back to the job's row. */
export async function saveJob(tx: Tx, job: TxJob): Promise<void> {
  await tx`
    UPDATE sw_jobs SET
      status = ${job.status}, queued_at = ${job.queuedAt}, started_at = ${job.startedAt ?? null}, ended_at = ${job.endedAt ?? null},
      worker_id = ${job.workerId ?? null}, output = ${jsonb(tx, job.output)}, error = ${jsonb(tx, job.error)},
      retries = ${job.retries}, attempt = ${job.attempt}, lost = ${job.lost}, result_from = ${jsonb(tx, job.resultFrom)},
      chunk_count = ${job.chunkCount}, unread_count = ${job.unreadChunkCount}, expires_at = ${job.expiresAt},
      execution_deadline = ${job.executionDeadline ?? null}, execution_timeout_ms = ${job.executionTimeoutMs ?? null},
      delete_at = ${job.deleteAt ?? null}, reported_at = ${job.reportedAt ?? null},
      queue_seq = CASE WHEN ${job.requeued === true} THEN nextval('sw_queue_seq') ELSE queue_seq END
    WHERE endpoint_id = ${job.endpointId} AND id = ${job.id}`;
}

/**
 * The end of a changing transaction, in one statement: the call's counter moves added to
 * one shard of the endpoint's counters, and its notifications (`payloads`, sent at commit).
 */
export async function finishChanges(tx: Tx, changes: Changes, payloads: readonly string[]): Promise<void> {
  const { completed, failed, retried } = changes.counters;
  const counted = changes.countersEndpoint !== undefined && completed + failed + retried > 0;
  if (!counted && payloads.length === 0) return;
  const counters = counted
    ? tx`INSERT INTO sw_counters (endpoint_id, shard, completed, failed, retried)
        VALUES (${changes.countersEndpoint ?? ''}, ${Math.floor(Math.random() * COUNTER_SHARDS)}, ${completed}, ${failed}, ${retried})
        ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = sw_counters.completed + EXCLUDED.completed,
          failed = sw_counters.failed + EXCLUDED.failed, retried = sw_counters.retried + EXCLUDED.retried RETURNING 1`
    : tx`SELECT 1 WHERE false`;
  // A data-modifying WITH runs to completion whether or not the query reads it.
  await tx`WITH counted AS (${counters}) SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${tx.array([...payloads])}::text[]) AS payload`;
}

function count(changes: Changes, endpointId: string, field: 'completed' | 'failed' | 'retried'): void {
  changes.countersEndpoint = endpointId;
  changes.counters[field]++;
}

export function changed(changes: Changes, job: StoredJob): void {
  changes.events.push({ type: 'changed', endpointId: job.endpointId, jobId: job.id });
}

export function orderStop(changes: Changes, job: StoredJob, workerId: string, reason: StopOrder['reason']): void {
  const stop: StopOrder = { endpointId: job.endpointId, workerId, jobId: job.id, reason, attempt: job.attempt };
  changes.stops.push(stop);
  changes.events.push({ type: 'stop', ...stop });
}

/** The job reaches a terminal status by `trigger` (state table), is released, and gets its retention deadline. */
export function endJob(job: TxJob, trigger: JobTrigger, result: { output?: unknown; error?: JobErrorPayload }, now: number, changes: Changes): void {
  job.status = nextState(job.status, trigger, job.id);
  if (job.startedAt !== undefined) job.endedAt = now;
  if (job.status === 'COMPLETED') {
    job.output = result.output;
    count(changes, job.endpointId, 'completed');
  } else if (job.status === 'FAILED' || job.status === 'TIMED_OUT') {
    if (result.error) job.error = result.error;
    count(changes, job.endpointId, 'failed');
  }
  if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: job.endpointId, workerId: job.workerId });
  delete job.workerId;
  delete job.executionDeadline;
  job.deleteAt = now + job.retentionMs;
  changed(changes, job);
  changes.ended.push({ ...job });
}

/**
 * Back in the queue (retry, or requeue of a lost job); answers false when a lost job
 * was lost more than `maxRequeues` times and ended FAILED (SW_REQUEUE_LIMIT) instead.
 * The caller deletes the job's chunks when it answers true.
 */
export function requeueJob(job: TxJob, trigger: 'retry' | 'requeue', maxRequeues: number, now: number, changes: Changes): boolean {
  if (trigger === 'requeue' && ++job.lost > maxRequeues) {
    endJob(job, 'fail', { error: requeueLimitPayload(job, maxRequeues, job.workerId) }, now, changes);
    return false;
  }
  if (trigger === 'retry') job.lost = 0;
  job.status = nextState(job.status, trigger, job.id);
  if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: job.endpointId, workerId: job.workerId });
  for (const field of ['workerId', 'output', 'error', 'startedAt', 'endedAt', 'resultFrom', 'executionDeadline', 'deleteAt', 'reportedAt'] as const) delete job[field];
  job.unreadChunkCount = 0;
  job.chunkCount = 0;
  job.queuedAt = now;
  job.retries++;
  job.requeued = true;
  count(changes, job.endpointId, 'retried');
  changed(changes, job);
  changes.events.push({ type: 'queued', endpointId: job.endpointId });
  return true;
}

/** A job taken but never handed to its worker: IN_QUEUE again as if never taken, keeping its queue_seq (its place) and counting nothing. */
export function giveBackJob(job: TxJob, changes: Changes): void {
  job.status = nextState(job.status, 'requeue', job.id);
  if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: job.endpointId, workerId: job.workerId });
  for (const field of ['workerId', 'startedAt', 'executionDeadline', 'executionTimeoutMs', 'reportedAt'] as const) delete job[field];
  job.attempt--;
  changed(changes, job);
  changes.events.push({ type: 'queued', endpointId: job.endpointId });
}

/** Save a job changed by endJob or requeueJob; a requeued one loses its chunks. */
export async function saveChanged(tx: Tx, job: TxJob): Promise<void> {
  await saveJob(tx, job);
  if (job.requeued === true) await tx`DELETE FROM sw_chunks WHERE endpoint_id = ${job.endpointId} AND job_id = ${job.id}`;
}

/** Delete the job (its chunks go with it). */
export async function deleteJob(tx: Tx, job: TxJob, changes: Changes): Promise<void> {
  await tx`DELETE FROM sw_jobs WHERE endpoint_id = ${job.endpointId} AND id = ${job.id}`;
  if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: job.endpointId, workerId: job.workerId });
  changes.deleted.push({ ...job });
  changed(changes, job);
}
