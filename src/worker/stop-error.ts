/**
 * @module worker/stop-error
 * The error a job ends with when it is stopped before its handler finished: its
 * execution timeout, a cancel, its ttl, or the worker's shutdown.
 */
import { ServerlessWorkerError, type Job, type StopReason } from '../job/index.js';

/** The error of a job stopped for `reason` (`timeoutMs`: its execution timeout, named in the message). */
export function abortError(reason: StopReason | 'shutdown', job: Job, timeoutMs: number): ServerlessWorkerError {
  switch (reason) {
    case 'timeout':
      return new ServerlessWorkerError('SW_EXECUTION_TIMEOUT', `Job ${job.id} ran past its execution timeout of ${timeoutMs} ms`, {
        jobId: job.id,
        executionTimeoutMs: timeoutMs,
      });
    case 'cancelled':
      return new ServerlessWorkerError('SW_JOB_CANCELLED', `Job ${job.id} was cancelled`, { jobId: job.id });
    case 'expired':
      return new ServerlessWorkerError('SW_JOB_EXPIRED', `Job ${job.id} reached the end of its ttl and was deleted`, {
        jobId: job.id,
      });
    case 'shutdown':
      return new ServerlessWorkerError('SW_WORKER_SHUTDOWN', `Worker shut down before job ${job.id} finished`, { jobId: job.id });
  }
}
