/**
 * @module harness/store/attempts
 * The attempt rules of the harness. Each take of a job starts a new attempt (1, 2, ...)
 * and hands its number to the worker (the job's `attempt` field); the worker sends it
 * back with progress, stream chunks and the result. Only the current attempt may
 * change the job: anything from an older one is refused with SW_STALE_ATTEMPT. A
 * worker that sends no attempt (the platform's Python SDK) is matched by worker id
 * alone, as before. A job lost more than `maxRequeues` times (its worker died, or the
 * take answer never reached it) ends FAILED with SW_REQUEUE_LIMIT instead of running
 * for ever. Stream chunks are stamped with the attempt that produced them
 * (`metrics.attempt`), so a reader sees a restarted stream.
 */
import { ServerlessWorkerError, type JobErrorPayload, type StreamChunk } from '../../job/index.js';
import type { StoredJob } from './job-store.js';

/** How many times a lost job goes back to the queue before it ends FAILED; default of `maxRequeues`. */
export const DEFAULT_MAX_REQUEUES = 3;

/**
 * Whether `attempt` (what a worker sent; undefined when it sent none) is not the job's
 * current attempt: an older one, or any while the job waits in the queue (the attempt
 * that was running was taken back: its worker was declared gone or its take answer lost).
 */
export function isStaleAttempt(job: Pick<StoredJob, 'attempt' | 'status'>, attempt: number | undefined): boolean {
  return attempt !== undefined && (attempt !== job.attempt || job.status === 'IN_QUEUE');
}

/** The refusal of a post from an older attempt (HTTP 409 on the worker API). */
export function staleAttemptError(job: Pick<StoredJob, 'id' | 'attempt' | 'status'>, attempt: number, what: string): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_STALE_ATTEMPT',
    job.status === 'IN_QUEUE'
      ? `The ${what} of job ${job.id} comes from attempt ${attempt}, which the platform took back (its worker was taken for gone, or its take answer for lost); the job is in the queue for another attempt`
      : `The ${what} of job ${job.id} comes from attempt ${attempt}, but the job is now on attempt ${job.attempt} (status ${job.status}); the older attempt's posts are refused`,
    { jobId: job.id, attempt, currentAttempt: job.attempt, status: job.status },
  );
}

/** The error of a job that was lost once more than `maxRequeues` allows. */
export function requeueLimitPayload(job: Pick<StoredJob, 'id' | 'lost'>, maxRequeues: number, workerId: string | undefined): JobErrorPayload {
  return {
    error_type: 'RequeueLimitError',
    error_code: 'SW_REQUEUE_LIMIT',
    error_message:
      `Job ${job.id} was lost ${job.lost} times (its worker died or went silent, or the job-take answer never reached it); ` +
      `the harness requeues a lost job at most ${maxRequeues} times (maxRequeues, --max-requeues), so it ends FAILED. ` +
      'If the handler crashes its worker on this input, fix that; /retry runs it again',
    hostname: 'harness',
    worker_id: workerId ?? '',
    runtime_version: '',
  };
}

/** The chunk with the attempt that produced it in its metrics. */
export function stampAttempt(chunk: StreamChunk, attempt: number): StreamChunk {
  return { output: chunk.output, metrics: { ...chunk.metrics, attempt } };
}
