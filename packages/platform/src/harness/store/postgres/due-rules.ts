/**
 * @module harness/store/postgres/due-rules
 * The time rules as data: ttl (`expires_at`: the job is deleted in any state, a running
 * one's worker gets a stop 'expired'), execution timeout (`execution_deadline`:
 * TIMED_OUT, SW_EXECUTION_TIMEOUT, stop 'timeout') and retention (`delete_at`: deleted).
 *
 * Applied in short transactions, never one long one (issue 33: 50 000 deletions in one
 * 34 s transaction held back vacuum and made timeouts wait behind the sweep):
 * - timeouts first, apart from the sweep: batches of TIMEOUT_BATCH jobs locked with
 *   `FOR UPDATE SKIP LOCKED` in one statement, each changed by the shared job rules
 *   (job-rules.ts `timeoutChange`), saved together by one statement, their counters by
 *   one per endpoint: one short transaction per batch;
 * - then the sweep: ttl and retention deletions together, set-based, SWEEP_BATCH rows a
 *   statement (`DELETE … WHERE ctid = ANY(… FOR UPDATE SKIP LOCKED) RETURNING` what the
 *   events need), each statement its own transaction. A row whose ttl and retention are
 *   both due is deleted by its ttl (a running job's worker gets its stop).
 * A row another process holds right now is skipped (that process, or the next pass,
 * applies it): each rule is applied once across processes. A timeout whose job's ttl
 * is earlier is left to the ttl (due order: the job is deleted, not TIMED_OUT first).
 *
 * Every statement here finds its rows by one index, `sw_jobs_due` on a row's first
 * deadline (`DUE_AT`: least() skips the deadlines a row does not have; migration 0008):
 * it reads the index up to now and keeps the rows of its own rule. The rows it passes
 * over are due by the other statement of the same pass.
 */
import type postgres from 'postgres';
import { type DueOutcome, expiryStop, type StopOrder, type StoredJob, type StoreEvent, timeoutChange } from 'serverless-worker/internal';
import { applyChange, changed, finishChanges, newChanges, orderStop, saveJobs, type Changes, type Tx, type TxJob } from './job-changes.js';
import { JOB_COLUMNS, storedJobOf } from './rows.js';
import { inTransaction } from './transactions.js';

/** Jobs timed out in one transaction at most (locked by one statement, saved by one). */
export const TIMEOUT_BATCH = 500;
/** Jobs deleted by one sweep statement (one transaction) at most. */
export const SWEEP_BATCH = 1_000;

/**
 * A job's first deadline, word for word the expression of the index `sw_jobs_due` (the planner uses an expression
 * index only for the same expression).
 */
export const DUE_AT = 'least(expires_at, execution_deadline, delete_at)';

export async function nextDueAt(sql: postgres.Sql): Promise<number | undefined> {
  const rows = await sql`SELECT min(${sql.unsafe(DUE_AT)}) AS due FROM sw_jobs`;
  const due = rows[0]?.due as string | number | null | undefined;
  return due === null || due === undefined ? undefined : Number(due);
}

/**
 * One batch of execution timeouts due at `now`, in one transaction (`tx`): their
 * changes per endpoint (each endpoint's counters are its own). Answers how many rows
 * the batch locked: a full batch means there may be more.
 */
export async function applyTimeouts(tx: Tx, now: number): Promise<{ readonly locked: number; readonly changes: Changes[] }> {
  const rows = await tx`
    SELECT ${tx.unsafe(JOB_COLUMNS)} FROM sw_jobs
    WHERE ${tx.unsafe(DUE_AT)} <= ${now} AND execution_deadline <= ${now} AND execution_deadline <= expires_at AND status = 'IN_PROGRESS'
    ORDER BY ${tx.unsafe(DUE_AT)} LIMIT ${TIMEOUT_BATCH} FOR UPDATE SKIP LOCKED`;
  const byEndpoint = new Map<string, Changes>();
  const timedOut: TxJob[] = [];
  for (const row of rows) {
    const job: TxJob = { ...storedJobOf(row) };
    let changes = byEndpoint.get(job.endpointId);
    if (!changes) byEndpoint.set(job.endpointId, (changes = newChanges()));
    applyChange(job, timeoutChange(job, now), changes);
    timedOut.push(job);
  }
  await saveJobs(tx, timedOut);
  for (const changes of byEndpoint.values()) await finishChanges(tx, changes);
  return { locked: rows.length, changes: [...byEndpoint.values()] };
}

/**
 * One sweep statement: delete up to SWEEP_BATCH jobs whose ttl or retention is due at `now`, first deadline first,
 * skipping rows other transactions hold; their events, stops and deleted records go to `changes`, the ttl's first
 * (by ttl), then the retention's (by retention). Answers how many were deleted (a full batch means there may be more).
 */
export async function sweepDue(sql: postgres.Sql, now: number, changes: Changes): Promise<number> {
  const rows = await sql`
    DELETE FROM sw_jobs WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM sw_jobs WHERE ${sql.unsafe(DUE_AT)} <= ${now} AND (expires_at <= ${now} OR delete_at <= ${now})
      ORDER BY ${sql.unsafe(DUE_AT)} LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED
    )) AND (expires_at <= ${now} OR delete_at <= ${now})
    RETURNING ${sql.unsafe(JOB_COLUMNS)}`;
  const jobs = rows.map((row) => storedJobOf(row));
  const expired = jobs.filter((job) => job.expiresAt <= now).sort((a, b) => a.expiresAt - b.expiresAt);
  const retained = jobs.filter((job) => job.expiresAt > now).sort((a, b) => (a.deleteAt ?? 0) - (b.deleteAt ?? 0));
  for (const job of [...expired, ...retained]) {
    const stop = job.expiresAt <= now ? expiryStop(job) : undefined;
    if (stop !== undefined && job.workerId !== undefined) orderStop(changes, job, job.workerId, stop);
    if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: job.endpointId, workerId: job.workerId });
    changes.deleted.push(job);
    changed(changes, job);
  }
  return rows.length;
}

/**
 * The deadlines due at `now` in short transactions: the timeouts first, a batch a
 * transaction, then the ttl and retention sweep, a set-based statement of up to
 * SWEEP_BATCH deletions each. The events of each batch go to `publish` once it
 * committed; `stillOpen` throws when the store closed meanwhile.
 */
export async function applyAllDue(
  sql: postgres.Sql,
  now: number,
  publish: (events: readonly StoreEvent[]) => void,
  stillOpen: () => void,
): Promise<DueOutcome> {
  const outcome = { ended: [] as StoredJob[], stops: [] as StopOrder[], deleted: [] as StoredJob[] };
  const take = (changes: Changes): void => {
    outcome.ended.push(...changes.ended);
    outcome.stops.push(...changes.stops);
    outcome.deleted.push(...changes.deleted);
    publish(changes.events);
  };
  for (;;) {
    const batch = await inTransaction(sql, (tx) => applyTimeouts(tx, now));
    for (const changes of batch.changes) take(changes);
    if (batch.locked < TIMEOUT_BATCH) break;
  }
  for (;;) {
    stillOpen();
    const changes = newChanges();
    const deleted = await sweepDue(sql, now, changes);
    take(changes);
    if (deleted < SWEEP_BATCH) break;
  }
  return outcome;
}
