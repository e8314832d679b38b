/**
 * @module harness/store/postgres/due-rules
 * The time rules as data: ttl (`expires_at`: the job is deleted in any state, a running
 * one's worker gets a stop 'expired'), execution timeout (`execution_deadline`:
 * TIMED_OUT, SW_EXECUTION_TIMEOUT, stop 'timeout') and retention (`delete_at`: deleted).
 * `applyDue` takes the due deadlines in due order, locks each job with
 * `FOR UPDATE SKIP LOCKED` and checks again that the deadline still holds on the locked
 * row: a job another process is handling right now is skipped (that process applies
 * it), so each rule is applied once across processes.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import { expiryStop, timeoutChange } from 'serverless-worker/internal/harness/store/job-rules.js';
import { applyChange, deleteJob, lockJob, orderStop, saveJob, type Changes, type Tx, type TxJob } from './job-changes.js';

/** Deadlines handled by one pass; applyDue repeats passes while they come back full. */
const BATCH = 500;

const Due = z.object({ endpoint_id: z.string(), id: z.string(), kind: z.enum(['ttl', 'execution', 'retention']), due: z.union([z.string(), z.number()]).transform(Number) });

export async function nextDueAt(sql: postgres.Sql): Promise<number | undefined> {
  const rows = await sql`
    SELECT least(
      (SELECT min(expires_at) FROM sw_jobs),
      (SELECT min(execution_deadline) FROM sw_jobs WHERE execution_deadline IS NOT NULL),
      (SELECT min(delete_at) FROM sw_jobs WHERE delete_at IS NOT NULL)) AS due`;
  const due = rows[0]?.due as string | number | null | undefined;
  return due === null || due === undefined ? undefined : Number(due);
}

function stillDue(job: TxJob, kind: z.infer<typeof Due>['kind'], now: number): boolean {
  if (kind === 'ttl') return job.expiresAt <= now;
  if (kind === 'execution') return job.status === 'IN_PROGRESS' && job.executionDeadline !== undefined && job.executionDeadline <= now;
  return job.deleteAt !== undefined && job.deleteAt <= now;
}

/** Apply every deadline `<= now`, in due order, each once. */
export async function applyDue(tx: Tx, now: number, changes: Changes): Promise<void> {
  const skipped = new Set<string>();
  for (;;) {
    const rows = await tx`
      SELECT endpoint_id, id, kind, due FROM (
        (SELECT endpoint_id, id, 'ttl' AS kind, expires_at AS due FROM sw_jobs WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${BATCH})
        UNION ALL
        (SELECT endpoint_id, id, 'execution', execution_deadline FROM sw_jobs WHERE execution_deadline <= ${now} ORDER BY execution_deadline LIMIT ${BATCH})
        UNION ALL
        (SELECT endpoint_id, id, 'retention', delete_at FROM sw_jobs WHERE delete_at <= ${now} ORDER BY delete_at LIMIT ${BATCH})
      ) due ORDER BY due, kind LIMIT ${BATCH}`;
    let applied = 0;
    for (const raw of rows) {
      const entry = Due.parse(raw);
      const key = `${entry.endpoint_id}\u0000${entry.id}`;
      if (skipped.has(key)) continue;
      const job = await lockJob(tx, entry.endpoint_id, entry.id, true);
      if (!job || !stillDue(job, entry.kind, now)) {
        // Locked by another process (which applies it), or already handled: not this pass's.
        skipped.add(key);
        continue;
      }
      applied++;
      if (entry.kind === 'ttl') {
        const stop = expiryStop(job);
        if (stop !== undefined && job.workerId !== undefined) orderStop(changes, job, job.workerId, stop);
        await deleteJob(tx, job, changes);
        skipped.add(key);
      } else if (entry.kind === 'execution') {
        applyChange(job, timeoutChange(job, now), changes);
        await saveJob(tx, job);
      } else {
        await deleteJob(tx, job, changes);
        skipped.add(key);
      }
    }
    if (rows.length < BATCH || applied === 0) return;
  }
}
