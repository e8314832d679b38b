/**
 * @module worker/job-telemetry
 * What the worker records around each job: a GPU window (peak and mean utilisation,
 * peak memory over the job's run) for the job-finished log line, and the job and
 * stream metrics. Plugged into the runtime as its job events.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import type { GpuSampler, GpuWindowSummary } from '../gpu/index.js';
import { runKey, type Job } from '../job/index.js';
import { recordJobFinished, recordJobStarted, type FinalJobStatus, type Metrics } from '../metrics/index.js';
import type { RunEnd, RunOutcome } from './job-run.js';
import { JobLogSummary, logJobEnd } from './job-log.js';
import type { WorkerRuntimeEvents } from './worker-runtime.js';

export interface JobTelemetryOptions {
  logger: Logger;
  /** Job and stream metrics; default none. */
  metrics?: Metrics;
  /** GPU sampler; default none (no GPU figures in the log line). */
  sampler?: GpuSampler;
  /** One info line per finished job (true), or debug lines and an info summary per interval (false, default). */
  logEveryJob?: boolean;
  /** Time between two summary lines, ms; default 60 000. */
  summaryIntervalMs?: number;
  /** Times the summary interval; default the system clock. */
  clock?: Clock;
}

export type JobTelemetry = Required<Pick<WorkerRuntimeEvents, 'onJobStart' | 'onJobEnd'>> & {
  /** Write the summary line of the jobs counted so far (at stop). */
  flush(): void;
};

const FINAL_STATUS: Record<RunEnd, FinalJobStatus | undefined> = {
  completed: 'COMPLETED',
  failed: 'FAILED',
  timed_out: 'TIMED_OUT',
  cancelled: 'CANCELLED',
  shutdown: 'FAILED',
  // ttl expiry deletes the job: it has no final status to count.
  expired: undefined,
  // The platform decided the job's status, not this run.
  refused: undefined,
  stale_attempt: undefined,
  undelivered: undefined,
};

/** GPU figures for the job-finished log line. */
export function gpuLogFields(summary: GpuWindowSummary | undefined): Record<string, unknown> {
  if (!summary) return {};
  return {
    gpu: {
      samples: summary.samples,
      peakUtilizationPercent: summary.peakUtilizationPercent,
      meanUtilizationPercent: summary.meanUtilizationPercent,
      peakMemoryUsedBytes: summary.peakMemoryUsedBytes,
    },
  };
}

export function createJobTelemetry(options: JobTelemetryOptions): JobTelemetry {
  const { logger, metrics, sampler } = options;
  // By run (job id and attempt): two attempts of one job may run side by side on this worker.
  const windows = new Map<string, { end(): GpuWindowSummary | undefined }>();
  const summary = options.logEveryJob
    ? undefined
    : new JobLogSummary(logger, {
        ...(options.summaryIntervalMs !== undefined ? { intervalMs: options.summaryIntervalMs } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
  return {
    flush() {
      summary?.flush();
    },
    onJobStart(job: Job) {
      if (sampler) windows.set(runKey(job.id, job.attempt), sampler.beginWindow());
      if (metrics) recordJobStarted(metrics);
    },
    onJobEnd(job: Job, outcome: RunOutcome) {
      let gpu: Record<string, unknown> | undefined;
      if (sampler) {
        const key = runKey(job.id, job.attempt);
        const window = windows.get(key);
        windows.delete(key);
        gpu = gpuLogFields(window?.end());
      }
      logJobEnd(logger, job, outcome, gpu, summary ? 'debug' : 'info');
      summary?.add(outcome);
      if (!metrics) return;
      const status = FINAL_STATUS[outcome.end];
      if (status) recordJobFinished(metrics, { status, durationMs: outcome.durationMs });
      else metrics.jobsInProgress.dec();
      if (outcome.chunks > 0) {
        metrics.streamChunksTotal.inc(outcome.chunks);
        metrics.streamBytesTotal.inc(outcome.streamBytes);
      }
    },
  };
}
