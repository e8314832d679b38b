/**
 * @module worker/job-log
 * The job-finished log line and the interval summary. A job that failed or timed out
 * is a warning line with its job id, always. A completed (or cancelled) job is one
 * info line when `logEveryJob` is on; by default it is a debug line (built only when
 * debug is enabled) and counts towards one info summary line per interval, so that a
 * busy worker does not spend a share of each job on its log.
 */
import type { Logger } from 'pino';
import { systemClock, type Clock, type TimerHandle } from '../clock/index.js';
import type { Job } from '../job/index.js';
import type { RunEnd, RunOutcome } from './job-run.js';

/** Default time between two summary lines, ms. */
export const DEFAULT_JOB_SUMMARY_INTERVAL_MS = 60_000;

function jobFields(job: Job, outcome: RunOutcome, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    requestId: job.id,
    // Which take of the job this run was (the harness's; none on the platform): two attempts of one job may end on one worker.
    ...(job.attempt !== undefined ? { attempt: job.attempt } : {}),
    end: outcome.end,
    durationMs: Math.round(outcome.durationMs * 1000) / 1000,
    ...(outcome.chunks > 0 ? { chunks: outcome.chunks } : {}),
    ...extra,
  };
}

/**
 * Log how a job ended. `level` is where a completed, cancelled or expired job goes
 * (default info); a failed, timed-out or shut-down job is a warning whatever it says.
 */
export function logJobEnd(logger: Logger, job: Job, outcome: RunOutcome, extra: Record<string, unknown> = {}, level: 'info' | 'debug' = 'info'): void {
  const { end } = outcome;
  if (end === 'completed' || end === 'cancelled' || end === 'expired') {
    if (logger.isLevelEnabled?.(level) === false) return;
    logger[level](jobFields(job, outcome, extra), end === 'completed' ? 'job finished' : 'job stopped');
    return;
  }
  if (end === 'stale_attempt') {
    logger.info(jobFields(job, outcome, extra), "job attempt superseded: the platform runs a newer attempt and refused this one's result");
    return;
  }
  if (end === 'refused' || end === 'undelivered') {
    logger.error(jobFields(job, outcome, extra), 'job result not accepted by the platform');
    return;
  }
  const error = outcome.result?.kind === 'error' ? outcome.result.error.error_message : undefined;
  logger.warn({ ...jobFields(job, outcome, extra), error }, 'job failed');
}

export interface JobLogSummaryOptions {
  /** Time between two summary lines, ms; default 60 000. */
  intervalMs?: number;
  /** Times the interval; default the system clock. */
  clock?: Clock;
}

/**
 * Counts finished jobs and writes one info line per interval in which jobs ended:
 * how many, by end, and their mean and longest duration. No timer runs while no job
 * ends; `flush()` writes what is counted now (at stop).
 */
export class JobLogSummary {
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #since = 0;
  #jobs = 0;
  #totalMs = 0;
  #maxMs = 0;
  #ends: Partial<Record<RunEnd, number>> = {};

  constructor(logger: Logger, options: JobLogSummaryOptions = {}) {
    this.#logger = logger;
    this.#intervalMs = options.intervalMs ?? DEFAULT_JOB_SUMMARY_INTERVAL_MS;
    this.#clock = options.clock ?? systemClock;
  }

  /** Count one finished job. */
  add(outcome: RunOutcome): void {
    if (this.#jobs === 0) {
      this.#since = this.#clock.now();
      this.#timer = this.#clock.setTimer(this.#intervalMs, () => this.flush());
    }
    this.#jobs++;
    this.#totalMs += outcome.durationMs;
    if (outcome.durationMs > this.#maxMs) this.#maxMs = outcome.durationMs;
    this.#ends[outcome.end] = (this.#ends[outcome.end] ?? 0) + 1;
  }

  /** Write the summary of the jobs counted so far (none: nothing) and start a new interval. */
  flush(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#jobs === 0) return;
    const seconds = Math.max(0.001, (this.#clock.now() - this.#since) / 1000);
    this.#logger.info(
      {
        jobs: this.#jobs,
        ends: this.#ends,
        jobsPerSecond: Math.round((this.#jobs / seconds) * 10) / 10,
        meanDurationMs: Math.round((this.#totalMs / this.#jobs) * 1000) / 1000,
        maxDurationMs: Math.round(this.#maxMs * 1000) / 1000,
        overMs: Math.round(seconds * 1000),
      },
      `${this.#jobs} job(s) finished in the last ${Math.round(seconds)} s`,
    );
    this.#jobs = 0;
    this.#totalMs = 0;
    this.#maxMs = 0;
    this.#ends = {};
  }
}
