/**
 * @module metrics/record-job
 * The job metrics that always move together, in base units: callers measure in
 * milliseconds (Date.now()), Prometheus wants seconds, and a missed conversion is a
 * silent 1000x error on a dashboard.
 */
import type { JobStatus } from '../job/states.js';
import type { Metrics } from './create-metrics.js';

/** A status a job ends in. */
export type FinalJobStatus = Exclude<JobStatus, 'IN_QUEUE' | 'IN_PROGRESS'>;

/** A job started: one more in progress; its queue delay (ms, when known) observed in seconds. */
export function recordJobStarted(metrics: Metrics, job: { queueDelayMs?: number } = {}): void {
  metrics.jobsInProgress.inc();
  if (job.queueDelayMs !== undefined && job.queueDelayMs >= 0) {
    metrics.jobQueueDelaySeconds.observe(job.queueDelayMs / 1000);
  }
}

/** A job reached its final status: one fewer in progress, counted by status, its run time (ms) observed in seconds. */
export function recordJobFinished(metrics: Metrics, job: { status: FinalJobStatus; durationMs: number }): void {
  metrics.jobsInProgress.dec();
  metrics.jobsTotal.inc({ status: job.status });
  metrics.jobDurationSeconds.observe({ status: job.status }, Math.max(0, job.durationMs) / 1000);
}
