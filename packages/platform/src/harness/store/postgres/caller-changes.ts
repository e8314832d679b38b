/**
 * @module harness/store/postgres/caller-changes
 * The changes a caller asks for by job id (the platform API's cancel, retry, ttl and
 * purge), each run inside one of the store's changing transactions (`tx`, `changes`):
 * the job's row is locked, the shared job rules (job-rules.ts) applied to it, and it is
 * written back.
 */
import { cancelChange, type ChangeOutcome, retryChange, type StoredJob } from 'serverless-worker/internal';
import { applyChange, changed, lockJob, saveChanged, saveJob, stored, type Changes, type Tx, type TxJob } from './job-changes.js';
import { jobNotFound } from './reads.js';

async function found(tx: Tx, endpointId: string, jobId: string): Promise<TxJob> {
  const job = await lockJob(tx, endpointId, jobId);
  if (!job) throw jobNotFound(endpointId, jobId);
  return job;
}

export async function cancelJob(
  tx: Tx,
  changes: Changes,
  endpointId: string,
  jobId: string,
  now: number,
): Promise<{ readonly job: StoredJob } & ChangeOutcome> {
  const job = await found(tx, endpointId, jobId);
  const change = cancelChange(job, now);
  if (change.kind === 'refused') throw change.error;
  if (change.kind !== 'unchanged') {
    applyChange(job, change, changes);
    await saveJob(tx, job);
  }
  return { job: stored(job), ended: changes.ended, stops: changes.stops };
}

export async function retryJob(tx: Tx, changes: Changes, endpointId: string, jobId: string, now: number): Promise<StoredJob> {
  const job = await found(tx, endpointId, jobId);
  const change = retryChange(job, now);
  if (change.kind === 'refused') throw change.error;
  applyChange(job, change, changes);
  await saveChanged(tx, job);
  return stored(job);
}

export async function setJobTtl(tx: Tx, changes: Changes, endpointId: string, jobId: string, ttlMs: number, now: number): Promise<StoredJob> {
  const job = await found(tx, endpointId, jobId);
  job.expiresAt = now + ttlMs;
  await tx`UPDATE sw_jobs SET expires_at = ${job.expiresAt} WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
  changed(changes, job);
  return stored(job);
}

/** Delete the endpoint's queued jobs; answers how many. */
export async function purgeQueued(tx: Tx, changes: Changes, endpointId: string): Promise<number> {
  const rows = await tx<{ id: string }[]>`DELETE FROM sw_jobs WHERE endpoint_id = ${endpointId} AND status = 'IN_QUEUE' RETURNING id`;
  for (const row of rows) changes.events.push({ type: 'changed', endpointId, jobId: row.id });
  return rows.length;
}
