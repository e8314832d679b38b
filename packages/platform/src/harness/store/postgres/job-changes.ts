/**
 * @module harness/store/postgres/job-changes
 * The changes a transaction makes to one job: a job is read with its row locked
 * (`FOR UPDATE`), changed as a plain record by a change the job rules describe
 * (job-rules.ts, shared with the memory store; `applyChange`), and written back whole. Events, ended jobs and stops are collected in `Changes`; the store
 * sends the events at commit.
 */
import type postgres from 'postgres';
import type { TransactionSql } from '../../postgres/transaction.js';
import { changeEvents, type JobChange, requeueChange, type StopOrder, stopOrderOf, type StoredJob, type StoreEvent } from 'serverless-worker/internal';
import { JOB_COLUMNS, storedJobOf } from './rows.js';

export type Tx = TransactionSql;

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
export const COUNTER_SHARDS = 8;

/** The job with its row locked until the transaction ends, or undefined. */
export async function lockJob(tx: Tx, endpointId: string, jobId: string, skipLocked = false): Promise<TxJob | undefined> {
  const rows = skipLocked
    ? await tx`SELECT ${tx.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId} FOR UPDATE SKIP LOCKED`
    : await tx`SELECT ${tx.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId} FOR UPDATE`;
  const row = rows[0];
  return row ? { ...storedJobOf(row) } : undefined;
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
      retries = ${job.retries}, attempt = ${job.attempt}, lost = ${job.lost}, result_from = ${jsonb(tx, job.resultFrom)}, cancelled_from = ${job.cancelledFrom ?? null},
      chunk_count = ${job.chunkCount}, unread_count = ${job.unreadChunkCount}, expires_at = ${job.expiresAt},
      execution_deadline = ${job.executionDeadline ?? null}, execution_timeout_ms = ${job.executionTimeoutMs ?? null},
      delete_at = ${job.deleteAt ?? null}, reported_at = ${job.reportedAt ?? null},
      queue_seq = CASE WHEN ${job.requeued === true} THEN nextval('sw_queue_seq') ELSE queue_seq END
    WHERE endpoint_id = ${job.endpointId} AND id = ${job.id}`;
}

/** A json column's text for saveJobs: undefined stays SQL NULL. */
const jsonText = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/**
 * saveJob for several locked jobs in one statement (none requeued): the fields as one
 * json parameter of records, the json columns as their text (cast: kept as written).
 */
export async function saveJobs(tx: Tx, jobs: readonly TxJob[]): Promise<void> {
  if (jobs.length === 0) return;
  const records = jobs.map((job) => ({
    e: job.endpointId,
    i: job.id,
    status: job.status,
    queued_at: job.queuedAt,
    started_at: job.startedAt ?? null,
    ended_at: job.endedAt ?? null,
    worker_id: job.workerId ?? null,
    output: jsonText(job.output),
    error: jsonText(job.error),
    retries: job.retries,
    attempt: job.attempt,
    lost: job.lost,
    result_from: jsonText(job.resultFrom),
    chunk_count: job.chunkCount,
    unread_count: job.unreadChunkCount,
    expires_at: job.expiresAt,
    execution_deadline: job.executionDeadline ?? null,
    execution_timeout_ms: job.executionTimeoutMs ?? null,
    delete_at: job.deleteAt ?? null,
    reported_at: job.reportedAt ?? null,
  }));
  await tx`
    UPDATE sw_jobs j SET
      status = v.status, queued_at = v.queued_at, started_at = v.started_at, ended_at = v.ended_at, worker_id = v.worker_id,
      output = v.output::json, error = v.error::json, retries = v.retries, attempt = v.attempt, lost = v.lost, result_from = v.result_from::json,
      chunk_count = v.chunk_count, unread_count = v.unread_count, expires_at = v.expires_at, execution_deadline = v.execution_deadline,
      execution_timeout_ms = v.execution_timeout_ms, delete_at = v.delete_at, reported_at = v.reported_at
    FROM json_to_recordset(${tx.typed(JSON.stringify(records), 25)}::json) AS v(
      e text, i text, status text, queued_at bigint, started_at bigint, ended_at bigint, worker_id text, output text, error text,
      retries integer, attempt integer, lost integer, result_from text, chunk_count integer, unread_count integer, expires_at bigint,
      execution_deadline bigint, execution_timeout_ms bigint, delete_at bigint, reported_at bigint)
    WHERE j.endpoint_id = v.e AND j.id = v.i`;
}

/**
 * The end of a changing transaction: the call's counter moves added to one shard of the
 * endpoint's counters, in one statement (its events are sent after the commit).
 */
export async function finishChanges(tx: Tx, changes: Changes): Promise<void> {
  const { completed, failed, retried } = changes.counters;
  if (changes.countersEndpoint === undefined || completed + failed + retried === 0) return;
  await tx`INSERT INTO sw_counters (endpoint_id, shard, completed, failed, retried)
    VALUES (${changes.countersEndpoint}, ${Math.floor(Math.random() * COUNTER_SHARDS)}, ${completed}, ${failed}, ${retried})
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = sw_counters.completed + EXCLUDED.completed,
      failed = sw_counters.failed + EXCLUDED.failed, retried = sw_counters.retried + EXCLUDED.retried`;
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

/**
 * Apply a change the job rules describe (job-rules.ts) to the locked job: its fields (a
 * cleared one deleted), its new place at the end of the queue when requeued (saved by
 * saveChanged), the counters and the call's events, ended jobs and stops.
 */
export function applyChange(job: TxJob, change: JobChange, changes: Changes): void {
  const target = job as Record<string, unknown>;
  for (const [field, value] of Object.entries(change.fields)) {
    if (value === undefined) delete target[field];
    else target[field] = value;
  }
  if (change.dropsChunks) job.unreadChunkCount = 0;
  if (change.kind === 'requeued') job.requeued = true;
  if (change.counted !== undefined) count(changes, job.endpointId, change.counted);
  if (change.kind === 'ended') changes.ended.push(stored(job));
  const stop = stopOrderOf(job, change);
  if (stop) changes.stops.push(stop);
  changes.events.push(...changeEvents(job, change));
}

/** The lost job back in the queue (requeueChange); answers false when it was lost too often and ended FAILED instead. */
export function requeueLost(job: TxJob, maxRequeues: number, now: number, changes: Changes): boolean {
  const change = requeueChange(job, 'requeue', maxRequeues, now);
  applyChange(job, change, changes);
  return change.kind === 'requeued';
}

/** The record answered: the changed job without the transaction's marks. */
export function stored(job: TxJob): StoredJob {
  const { requeued: _requeued, ...fields } = job;
  return fields;
}

/** Save a job changed by applyChange; a requeued one loses its chunks. */
export async function saveChanged(tx: Tx, job: TxJob): Promise<void> {
  await saveJob(tx, job);
  if (job.requeued === true) await tx`DELETE FROM sw_chunks WHERE endpoint_id = ${job.endpointId} AND job_id = ${job.id}`;
}
