/**
 * @module harness/store/post-rules
 * Whether a worker's post (stream chunk, progress, result) applies to a job, and the error
 * a job gets when its execution timeout passes: the rules every job store shares, so that
 * the in-memory and the PostgreSQL store answer a post the same way. A store reads the
 * job (under its lock, for a shared store), asks these, and applies the post when they
 * refuse nothing.
 */
import { isTerminal, type JobErrorPayload, type StreamChunk } from '../../job/index.js';
import { isStaleAttempt } from './attempts.js';
import type { PostAck, ResultAck, StoredJob } from './store-types.js';

/** The fields of a job the rules read. */
export type PostFacts = Pick<StoredJob, 'status' | 'attempt' | 'workerId' | 'chunkCount' | 'resultFrom'>;

/** Running, and held by `workerId` (any worker when undefined: an in-process post). */
export function holds(job: Pick<StoredJob, 'status' | 'workerId'>, workerId: string | undefined): boolean {
  return job.status === 'IN_PROGRESS' && (workerId === undefined || job.workerId === workerId);
}

/** Why progress does not apply, or undefined when it does. */
export function refusedProgress(job: PostFacts | undefined, workerId: string | undefined, attempt: number | undefined): PostAck | undefined {
  if (!job) return { applied: false, reason: 'not_found' };
  if (isStaleAttempt(job, attempt)) return { applied: false, reason: 'stale_attempt', status: job.status };
  if (!holds(job, workerId)) return { applied: false, reason: 'not_held_by_worker', status: job.status };
  return undefined;
}

/**
 * Why a stream chunk does not apply, or undefined when it does. Chunks of one job are
 * stored in index order: an index the job already has is a post retried after a lost
 * answer (`duplicate`), an index past the next expected one (the job's chunk count: the
 * count starts again at 0 with each attempt, as the worker's indices do) came before a
 * chunk it follows (`ahead`: a worker posting several chunks at once). A chunk without
 * an index, or posted in process without a worker id, is stored as it comes.
 */
export function refusedChunk(job: PostFacts | undefined, workerId: string | undefined, chunk: StreamChunk, attempt: number | undefined): PostAck | undefined {
  if (!job) return { applied: false, reason: 'not_found' };
  if (isStaleAttempt(job, attempt)) return { applied: false, reason: 'stale_attempt', status: job.status };
  const index = chunk.metrics?.stream_index;
  if (typeof index === 'number' && workerId !== undefined && job.workerId === workerId && index < job.chunkCount) {
    return { applied: false, reason: 'duplicate', status: job.status };
  }
  if (!holds(job, workerId)) return { applied: false, reason: 'not_held_by_worker', status: job.status };
  if (Number.isInteger(index) && workerId !== undefined && (index as number) > job.chunkCount) {
    return { applied: false, reason: 'ahead', status: job.status, expected: job.chunkCount };
  }
  return undefined;
}

/**
 * The answer to a result post that does not end the job, or undefined when it does: a
 * repeat of the post that ended it (same worker, same attempt) is answered as applied and
 * `repeated`, any other post to an ended job `already_ended`.
 */
export function refusedResult(job: PostFacts | undefined, workerId: string | undefined, attempt: number | undefined): ResultAck | undefined {
  if (!job) return { applied: false, reason: 'not_found' };
  if (isStaleAttempt(job, attempt)) return { applied: false, reason: 'stale_attempt', status: job.status };
  if (isTerminal(job.status)) {
    const from = job.resultFrom;
    const same = from !== undefined && from.workerId === workerId && from.attempt === job.attempt;
    return same ? { applied: true, status: job.status, repeated: true } : { applied: false, reason: 'already_ended', status: job.status };
  }
  if (!holds(job, workerId)) return { applied: false, reason: 'not_held_by_worker', status: job.status };
  return undefined;
}

/** The error payload of a job that ran past its execution timeout. */
export function executionTimeoutError(job: Pick<StoredJob, 'executionTimeoutMs'>, workerId: string | undefined): JobErrorPayload {
  return {
    error_type: 'ExecutionTimeoutError',
    error_code: 'SW_EXECUTION_TIMEOUT',
    error_message: `Job ran past its execution timeout of ${job.executionTimeoutMs ?? 0} ms`,
    hostname: 'harness',
    worker_id: workerId ?? '',
    runtime_version: '',
  };
}
