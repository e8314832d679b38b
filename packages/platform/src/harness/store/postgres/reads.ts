/**
 * @module harness/store/postgres/reads
 * The PostgreSQL store's reads: one job, its stream (handed out once), the request list
 * (newest or oldest first, by index: `sw_jobs_newest`), counts per state
 * and /health.
 */
import type postgres from 'postgres';
import { transaction } from '../../postgres/transaction.js';
import * as z from 'zod';
import {
  hasHistoryFilter,
  type HealthCounts,
  JOB_STATUSES,
  type JobStatus,
  type ListPage,
  type ListQuery,
  matchesHistory,
  ServerlessWorkerError,
  type StateCounts,
  type StoredJob,
  type StreamChunk,
  type StreamRead,
} from 'serverless-worker/internal';
import { JOB_COLUMNS, storedJobOf } from './rows.js';

export function jobNotFound(endpointId: string, jobId: string): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_JOB_NOT_FOUND',
    `Job ${jobId} not found on endpoint ${endpointId}: it never existed, its ttl expired, or its results retention elapsed`,
    { jobId, endpointId },
  );
}

const ChunkRow = z.object({
  chunk: z.custom<StreamChunk>((value) => typeof value === 'object' && value !== null && 'output' in value, 'a stream chunk'),
  seq: z.union([z.string(), z.number()]),
});
const count = z.union([z.string(), z.number()]).transform(Number);

function chunksInOrder(rows: readonly unknown[]): StreamChunk[] {
  return rows
    .map((row) => ChunkRow.parse(row))
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((row) => row.chunk);
}

export async function readJob(sql: postgres.Sql, endpointId: string, jobId: string): Promise<StoredJob | undefined> {
  const rows = await sql`SELECT ${sql.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
  return rows[0] ? storedJobOf(rows[0]) : undefined;
}

/** The unread chunks, handed out once: deleted as they are read, under the job's row lock. */
export async function readStream(sql: postgres.Sql, endpointId: string, jobId: string): Promise<StreamRead> {
  return transaction(sql, async (tx) => {
    const jobs = await tx`UPDATE sw_jobs SET unread_count = 0 WHERE endpoint_id = ${endpointId} AND id = ${jobId} RETURNING status, attempt, retries`;
    const job = z
      .object({ status: z.enum(JOB_STATUSES), attempt: count, retries: count })
      .optional()
      .parse(jobs[0]);
    if (!job) throw jobNotFound(endpointId, jobId);
    const rows = await tx`DELETE FROM sw_chunks WHERE endpoint_id = ${endpointId} AND job_id = ${jobId} RETURNING seq, chunk`;
    return { status: job.status, stream: chunksInOrder(rows), attempt: job.attempt, retries: job.retries };
  });
}

export async function peekStream(sql: postgres.Sql, endpointId: string, jobId: string): Promise<readonly StreamChunk[] | undefined> {
  const [jobs, rows] = await Promise.all([
    sql`SELECT 1 FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id = ${jobId}`,
    sql`SELECT seq, chunk FROM sw_chunks WHERE endpoint_id = ${endpointId} AND job_id = ${jobId} ORDER BY seq`,
  ]);
  return jobs.length > 0 ? chunksInOrder(rows) : undefined;
}

/** `%text%` for ILIKE, with the pattern characters of `text` escaped. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * A regular expression for `"field": "value"` in a JSON text. The error a worker posted is
 * matched in its text, not with json's ->> : that operator de-escapes the strings it reads
 * and refuses \u0000 in any of them (a message holding NUL made every filtered list fail).
 */
function fieldPattern(field: string, value: string, match: 'whole' | 'prefix' = 'whole'): string {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A prefix: the value's JSON string without its closing quote.
  const quoted = match === 'prefix' ? JSON.stringify(value).slice(0, -1) : JSON.stringify(value);
  return `${escape(JSON.stringify(field))}\\s*:\\s*${escape(quoted)}`;
}

/**
 * The history filters in SQL (the in-memory store's matchesHistory, history-filter.ts):
 * each one an AND on the row. Text is looked for in the request's and the output's JSON
 * text as submitted and posted (json columns keep it), as the memory store does.
 */
function historyFilter(sql: postgres.Sql, query: ListQuery): postgres.PendingQuery<postgres.Row[]> {
  const parts: Array<postgres.PendingQuery<postgres.Row[]>> = [];
  if (query.workerId !== undefined) {
    parts.push(
      sql`AND (worker_id = ${query.workerId} OR (worker_id IS NULL AND (result_from->>'workerId' = ${query.workerId} OR (result_from IS NULL AND (cancelled_from = ${query.workerId} OR (cancelled_from IS NULL AND error::text ~ ${fieldPattern('worker_id', query.workerId)}))))))`,
    );
  }
  if (query.kind !== undefined) parts.push(sql`AND sync = ${query.kind === 'runsync'}`);
  if (query.errorCode !== undefined) parts.push(sql`AND error::text ~ ${fieldPattern('error_code', query.errorCode, 'prefix')}`);
  if (query.submittedFrom !== undefined) parts.push(sql`AND submitted_at >= ${query.submittedFrom}`);
  if (query.submittedTo !== undefined) parts.push(sql`AND submitted_at < ${query.submittedTo}`);
  const text = query.text?.trim();
  // The request's whole text, not request->'input': json's operators refuse a key holding \u0000 (every key on the way
  // is de-escaped), and the list must answer for every job a store took. The memory store searches the same text.
  if (text)
    parts.push(
      sql`AND (request::text ILIKE ${containsPattern(text)} OR output::text ILIKE ${containsPattern(text)} OR error::text ILIKE ${containsPattern(text)})`,
    );
  return parts.reduce((all, part) => sql`${all} ${part}`, sql``);
}

export async function readList(sql: postgres.Sql, endpointId: string, query: ListQuery): Promise<ListPage> {
  const states = query.states && query.states.length > 0 ? [...query.states] : undefined;
  const typed = query.search?.trim() || undefined;
  const stateFilter = states ? sql`AND status IN ${sql(states)}` : sql``;
  if (typed) {
    const exact =
      await sql`SELECT ${sql.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} AND id IN (${typed}, ${typed.toLowerCase()}) LIMIT 1`;
    if (exact[0]) {
      const job = storedJobOf(exact[0]);
      const matches = (!states || states.includes(job.status)) && (!hasHistoryFilter(query) || matchesHistory(job, query));
      return { total: matches ? 1 : 0, jobs: matches && query.offset === 0 && query.limit > 0 ? [job] : [] };
    }
  }
  const searchFilter = typed ? sql`AND id ILIKE ${containsPattern(typed)}` : sql``;
  const history = historyFilter(sql, query);
  const order =
    query.order === 'oldest'
      ? sql`ORDER BY seq ASC`
      : query.order === 'slowest'
        ? sql`ORDER BY (ended_at - started_at) DESC NULLS LAST, seq DESC`
        : query.order === 'waited'
          ? sql`ORDER BY (started_at - queued_at) DESC NULLS LAST, seq DESC`
          : sql`ORDER BY seq DESC`;
  const [totals, rows] = await Promise.all([
    sql`SELECT count(*) AS total FROM sw_jobs WHERE endpoint_id = ${endpointId} ${stateFilter} ${searchFilter} ${history}`,
    sql`SELECT ${sql.unsafe(JOB_COLUMNS)} FROM sw_jobs WHERE endpoint_id = ${endpointId} ${stateFilter} ${searchFilter} ${history}
        ${order} OFFSET ${query.offset} LIMIT ${query.limit}`,
  ]);
  return { total: count.parse(totals[0]?.total ?? 0), jobs: rows.map((row) => storedJobOf(row)) };
}

export async function readStateCounts(sql: postgres.Sql, endpointId: string): Promise<StateCounts> {
  const rows = await sql`SELECT status, count(*) AS n FROM sw_jobs WHERE endpoint_id = ${endpointId} GROUP BY status`;
  const counts = { retained: 0 } as Record<JobStatus | 'retained', number>;
  for (const status of JOB_STATUSES) counts[status] = 0;
  for (const raw of rows) {
    const row = z.object({ status: z.enum(JOB_STATUSES), n: count }).parse(raw);
    counts[row.status] = row.n;
    counts.retained += row.n;
  }
  return counts;
}

export async function readHealth(sql: postgres.Sql, endpointId: string): Promise<HealthCounts> {
  const rows = await sql`
    SELECT
      (SELECT coalesce(sum(completed), 0) FROM sw_counters WHERE endpoint_id = ${endpointId}) AS completed,
      (SELECT coalesce(sum(failed), 0) FROM sw_counters WHERE endpoint_id = ${endpointId}) AS failed,
      (SELECT coalesce(sum(retried), 0) FROM sw_counters WHERE endpoint_id = ${endpointId}) AS retried,
      (SELECT count(*) FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_PROGRESS') AS in_progress,
      (SELECT count(*) FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_QUEUE') AS in_queue,
      (SELECT count(*) FROM sw_workers w WHERE w.endpoint_id = ${endpointId} AND EXISTS (
        SELECT 1 FROM sw_jobs j WHERE j.endpoint_id = w.endpoint_id AND j.worker_id = w.id AND j.status = 'IN_PROGRESS')) AS running,
      (SELECT count(*) FROM sw_workers w WHERE w.endpoint_id = ${endpointId} AND NOT w.initializing AND NOT EXISTS (
        SELECT 1 FROM sw_jobs j WHERE j.endpoint_id = w.endpoint_id AND j.worker_id = w.id AND j.status = 'IN_PROGRESS')) AS idle`;
  const row = z.object({ completed: count, failed: count, retried: count, in_progress: count, in_queue: count, running: count, idle: count }).parse(rows[0]);
  return {
    jobs: { completed: row.completed, failed: row.failed, retried: row.retried, inProgress: row.in_progress, inQueue: row.in_queue },
    workers: { idle: row.idle, running: row.running },
  };
}
