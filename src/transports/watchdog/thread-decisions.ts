/**
 * @module transports/watchdog/thread-decisions
 * What the watchdog thread decides from the JobBoard, as plain functions (the thread's
 * program, watchdog-thread.ts, runs on import and cannot be loaded by a test): how
 * long the main thread has been blocked, whether the heartbeat still claims the jobs,
 * which jobs have passed their deadline plus grace, and the error each running job is
 * reported with when the watchdog fires. Jobs are told apart by their board slot, not
 * by their id: two attempts of one job can run on one worker, each in its own slot.
 */
import type { JobErrorPayload } from '../../job/index.js';
import type { WatchedJob } from './job-board.js';
import type { WatchdogThreadData } from './thread-protocol.js';

/** A job the watchdog reports, with its error payload. */
export interface Verdict {
  readonly job: WatchedJob;
  readonly timedOut: boolean;
  readonly error: JobErrorPayload;
}

/** How long the main thread's tick has stood still at `now`, ms (never negative). */
export function blockedFor(lastTickAt: number, now: number): number {
  return Math.max(0, now - lastTickAt);
}

/**
 * Whether the heartbeat lists the jobs: not once the watchdog fires (it reports them
 * itself), nor while the main thread has been blocked `blockedUnclaimMs` or longer
 * (eventLoopBlockedMs; undefined: always list them).
 */
export function claimsJobs(blockedMs: number, blockedUnclaimMs: number | undefined, firing: boolean): boolean {
  if (firing) return false;
  return blockedUnclaimMs === undefined || blockedMs < blockedUnclaimMs;
}

/** The slots of the jobs whose execution deadline plus `timeoutGraceMs` has passed at `now`. */
export function expiredSlots(jobs: readonly WatchedJob[], now: number, timeoutGraceMs: number): Set<number> {
  return new Set(jobs.filter((job) => now >= job.deadlineAt + timeoutGraceMs).map((job) => job.slot));
}

/** A job for messages: its id, and its attempt when it has one. */
export function jobName(job: WatchedJob): string {
  return job.attempt === undefined ? job.id : `${job.id} (attempt ${job.attempt})`;
}

/** The error payloads: the expired jobs (by slot) TIMED_OUT, the others FAILED SW_WORKER_SHUTDOWN. */
export function verdicts(jobs: readonly WatchedJob[], expired: ReadonlySet<number>, blockedMs: number, data: WatchdogThreadData): Verdict[] {
  const { workerId, hostname, version } = data.origin;
  const base = { hostname, worker_id: workerId, runtime_version: version, error_type: 'ServerlessWorkerError' };
  return jobs.map((job) => {
    if (expired.has(job.slot)) {
      const timeoutMs = Math.round(job.deadlineAt - job.startedAt);
      return {
        job,
        timedOut: true,
        error: {
          ...base,
          error_code: 'SW_EXECUTION_TIMEOUT',
          error_message:
            `Job ${jobName(job)} ran past its execution timeout of ${timeoutMs} ms plus the ${data.timeoutGraceMs} ms grace while its handler ` +
            `blocked the event loop (blocked for ${Math.round(blockedMs)} ms); the watchdog thread timed it out and this worker exits`,
        },
      };
    }
    return {
      job,
      timedOut: false,
      error: {
        ...base,
        error_code: 'SW_WORKER_SHUTDOWN',
        error_message: `Worker shut down before job ${jobName(job)} finished: another job blocked the event loop past its execution timeout, so this worker exits`,
      },
    };
  });
}
