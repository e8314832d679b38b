/**
 * @module worker/early-stops
 * Stops that named a job this worker does not run yet. A job and its stop reach the worker
 * by different roads: the job in a take answer, the stop in a job-stop poll (in the worker
 * child of `--serve-api`, a push and a `stops` message over its IPC channel, each sent when its
 * own wait in the supervisor ends). A job cancelled just after it was
 * handed out can have its stop arrive first; the platform sends a stop once, so a stop
 * dropped then was never seen again, and the job ran until its execution timeout with its
 * slot taken (the local API's next `/runsync` stayed IN_QUEUE: issue 46's intermittent
 * serve-api-channel failure). Kept here for a while, such a stop aborts the run as it starts:
 * the handler gets a signal already aborted, as for a stop that came between the start and
 * the handler's first line, and the run ends without a result.
 */
import type { Clock } from '../clock/index.js';
import type { Job, StopReason } from '../job/index.js';

export const EARLY_STOPS = {
  /** How long a stop waits for its job, ms: far longer than a job takes to arrive, short against a platform's timeouts. */
  keepMs: 60_000,
  /** At most this many stops wait at a time (the oldest goes first). */
  max: 1_024,
} as const;

interface EarlyStop {
  readonly reason: StopReason;
  readonly attempt: number | undefined;
  readonly until: number;
}

export class EarlyStops {
  readonly #clock: Clock;
  readonly #keepMs: number;
  readonly #max: number;
  /** By job id, oldest first (a Map keeps the order of insertion). */
  readonly #byJob = new Map<string, EarlyStop>();

  constructor(clock: Clock, keepMs: number = EARLY_STOPS.keepMs, max: number = EARLY_STOPS.max) {
    this.#clock = clock;
    this.#keepMs = keepMs;
    this.#max = Math.max(1, max);
  }

  /** Stops waiting now. */
  get size(): number {
    return this.#byJob.size;
  }

  /** A stop for a job not run here (yet): kept until `keepMs` passed or its job starts. */
  remember(jobId: string, reason: StopReason, attempt: number | undefined): void {
    const now = this.#clock.now();
    this.#prune(now);
    this.#byJob.delete(jobId);
    while (this.#byJob.size >= this.#max) this.#byJob.delete(this.#byJob.keys().next().value as string);
    this.#byJob.set(jobId, { reason, attempt, until: now + this.#keepMs });
  }

  /** The reason of a stop waiting for `job` (then no longer kept), if one does: a stop naming another attempt does not count. */
  takeFor(job: Job): StopReason | undefined {
    if (this.#byJob.size === 0) return undefined;
    const stop = this.#byJob.get(job.id);
    if (stop === undefined) return undefined;
    if (stop.until <= this.#clock.now()) {
      this.#byJob.delete(job.id);
      return undefined;
    }
    if (stop.attempt !== undefined && job.attempt !== undefined && stop.attempt !== job.attempt) return undefined;
    this.#byJob.delete(job.id);
    return stop.reason;
  }

  #prune(now: number): void {
    for (const [jobId, stop] of this.#byJob) {
      // Oldest first, all kept as long: the first one still due ends the sweep.
      if (stop.until > now) return;
      this.#byJob.delete(jobId);
    }
  }
}
