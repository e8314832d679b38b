/**
 * @module harness/store/postgres/worker-changes
 * The changes a worker's calls (or the harness on a lost worker's behalf) make to one job
 * outside its take and its result: a stream chunk, a progress update, a lost job requeued
 * and a job given back. Each runs inside one of the store's changing transactions (`tx`,
 * `changes`): the job's row is locked, the shared job rules applied to it, and it is
 * written back.
 */
import {
  type ChangeOutcome,
  giveBackChange,
  type PostAck,
  refusedChunk,
  refusedProgress,
  type RequeueRules,
  stampAttempt,
  type StreamChunk,
} from 'serverless-worker/internal';
import { applyChange, changed, jsonb, lockJob, requeueLost, saveChanged, saveJob, type Changes, type Tx } from './job-changes.js';

/** Which job a worker's call is about, and whose attempt it says it is. */
export interface WorkerCall {
  readonly endpointId: string;
  readonly jobId: string;
  readonly workerId: string | undefined;
  readonly attempt: number | undefined;
}

export async function pushChunkChange(tx: Tx, changes: Changes, call: WorkerCall, chunk: StreamChunk): Promise<PostAck> {
  const { endpointId, jobId } = call;
  const job = await lockJob(tx, endpointId, jobId);
  const refused = refusedChunk(job, call.workerId, chunk, call.attempt);
  if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
  await tx`INSERT INTO sw_chunks (endpoint_id, job_id, chunk) VALUES (${endpointId}, ${jobId}, ${jsonb(tx, stampAttempt(chunk, job.attempt))})`;
  await tx`UPDATE sw_jobs SET chunk_count = chunk_count + 1, unread_count = unread_count + 1 WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
  changed(changes, job);
  return { applied: true };
}

export async function progressChange(tx: Tx, changes: Changes, call: WorkerCall, output: unknown): Promise<PostAck> {
  const { endpointId, jobId } = call;
  const job = await lockJob(tx, endpointId, jobId);
  const refused = refusedProgress(job, call.workerId, call.attempt);
  if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
  await tx`UPDATE sw_jobs SET output = ${jsonb(tx, output)} WHERE endpoint_id = ${endpointId} AND id = ${jobId}`;
  changed(changes, job);
  return { applied: true };
}

/** A job lost with `workerId` (still IN_PROGRESS on it) queued again, or ended once its requeues are spent. */
export async function requeueLostJob(
  tx: Tx,
  changes: Changes,
  lost: { readonly endpointId: string; readonly jobId: string; readonly workerId: string },
  rules: RequeueRules,
  now: number,
): Promise<{ readonly requeued: boolean } & ChangeOutcome> {
  const job = await lockJob(tx, lost.endpointId, lost.jobId);
  let requeued = false;
  if (job && job.status === 'IN_PROGRESS' && job.workerId === lost.workerId) {
    requeued = requeueLost(job, rules.maxRequeues, now, changes);
    await saveChanged(tx, job);
  }
  return { requeued, ended: changes.ended, stops: changes.stops };
}

/** A job handed to `workerId` and never started, back in the queue; `given` runs once it is (before the commit). */
export async function giveBackJob(tx: Tx, changes: Changes, call: WorkerCall, given: () => void): Promise<boolean> {
  const job = await lockJob(tx, call.endpointId, call.jobId);
  if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== call.workerId || job.attempt !== call.attempt) return false;
  given();
  applyChange(job, giveBackChange(job), changes);
  await saveJob(tx, job);
  return true;
}
