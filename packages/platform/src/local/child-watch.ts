/**
 * @module local/child-watch
 * The heartbeat and the deadline watchdog of the worker child of `--serve-api` joined over
 * its IPC channel, kept by its supervisor. A platform worker runs both in a thread of its
 * own (serverless-worker's transports/watchdog): a V8 isolate, about 13 MiB of PSS on Node 24
 * (7 on Node 20), the largest part of the child's memory that is not the user's. The
 * supervisor is a process beside the child, so it can do both without one:
 *
 * - the heartbeat: every `pingIntervalMs` from the child's first message, the worker API's
 *   ping for the child, listing the jobs out with it (pushed, no result or `free` yet);
 * - the watchdog: the child says its default execution timeout and grace once (`timeouts`)
 *   and ticks while it holds jobs (`tick`, every TICK_MS; any message counts). A job's deadline
 *   is its push plus its policy's execution timeout (else the child's default). Once a job
 *   is past its deadline plus the grace while the child has been silent for `staleAfterMs`,
 *   its event loop is blocked (a handler that keeps its loop turning is timed out by the
 *   child's own runtime): the job is ended TIMED_OUT with `SW_EXECUTION_TIMEOUT`, as the
 *   thread reports it, and the child is killed. Its other jobs go back to the queue with its
 *   exit (the thread ended them FAILED; here nothing else is lost), and the supervisor starts
 *   a new child.
 */
import type { Logger } from 'pino';
import { type Clock, type JobErrorPayload, reportedHostname, RUNTIME_VERSION, type TimerHandle } from 'serverless-worker/internal';
import type { WorkerApiCalls } from '../harness/worker-api/index.js';

export const CHILD_WATCH = {
  /** How often the deadlines are checked while jobs are out, ms. */
  checkMs: 250,
  /** Silent this long (past a deadline): the child's event loop is blocked, ms. Four ticks. */
  staleAfterMs: 2_000,
} as const;

export interface ChildWatchOptions {
  readonly calls: WorkerApiCalls;
  readonly endpointId: string;
  readonly workerId: string;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly pingIntervalMs: number;
  /** The jobs out with the child (pushed, no result or `free` yet), by runKey: the channel's own record, read here. */
  readonly jobs: ReadonlyMap<string, WatchedJob>;
  /** The child is blocked past a job's deadline (that job already ended TIMED_OUT): end it. */
  readonly onBlocked: () => void;
  readonly checkMs?: number;
  readonly staleAfterMs?: number;
}

/** A job out with the child, as the channel records it at its push. */
export interface WatchedJob {
  readonly id: string;
  readonly attempt: number | undefined;
  readonly pushedAt: number;
  /** The policy's execution timeout, when the job has one, ms. */
  readonly timeoutMs: number | undefined;
}

export class ChildWatch {
  readonly #options: ChildWatchOptions;
  readonly #checkMs: number;
  readonly #staleAfterMs: number;
  readonly #jobs: ReadonlyMap<string, WatchedJob>;
  #timeouts: { readonly defaultMs: number; readonly graceMs: number } | undefined;
  #heardAt: number;
  #checker: TimerHandle | undefined;
  #pinger: TimerHandle | undefined;
  #fired = false;
  #stopped = false;

  constructor(options: ChildWatchOptions) {
    this.#options = options;
    this.#checkMs = options.checkMs ?? CHILD_WATCH.checkMs;
    this.#staleAfterMs = options.staleAfterMs ?? CHILD_WATCH.staleAfterMs;
    this.#jobs = options.jobs;
    this.#heardAt = options.clock.now();
  }

  /** The child said something: its event loop turns. Its first message starts the heartbeat. */
  heard(): void {
    this.#heardAt = this.#options.clock.now();
    if (this.#pinger === undefined && !this.#stopped) this.#ping();
  }

  /** The child's default execution timeout and grace, ms. */
  timeouts(defaultMs: number, graceMs: number): void {
    this.#timeouts = { defaultMs, graceMs };
    this.#arm();
  }

  /** Jobs were pushed to the child (and recorded in `jobs`): their deadlines are checked. */
  pushed(): void {
    this.#arm();
  }

  /** A job's result or `free` came (and it left `jobs`): no checks once none is out. */
  ended(): void {
    if (this.#jobs.size === 0) {
      this.#checker?.cancel();
      this.#checker = undefined;
    }
  }

  /** The child exited: no more pings or checks. */
  stop(): void {
    this.#stopped = true;
    this.#checker?.cancel();
    this.#checker = undefined;
    this.#pinger?.cancel();
    this.#pinger = undefined;
  }

  #ping(): void {
    const { calls, endpointId, workerId, logger, clock, pingIntervalMs } = this.#options;
    // The jobs the watchdog ended are not the child's any more.
    const ids = this.#fired ? [] : [...new Set([...this.#jobs.values()].map((job) => job.id))];
    calls
      .ping(endpointId, workerId, ids, logger)
      .catch((error: unknown) => logger.warn({ err: error, workerId }, 'the heartbeat of the worker process failed'));
    this.#pinger = clock.setTimer(pingIntervalMs, () => {
      this.#pinger = undefined;
      if (!this.#stopped) this.#ping();
    });
  }

  #arm(): void {
    if (this.#checker !== undefined || this.#stopped || this.#fired || this.#timeouts === undefined || this.#jobs.size === 0) return;
    this.#checker = this.#options.clock.setTimer(this.#checkMs, () => {
      this.#checker = undefined;
      this.#check();
    });
  }

  #check(): void {
    const timeouts = this.#timeouts;
    if (this.#stopped || this.#fired || timeouts === undefined) return;
    const now = this.#options.clock.now();
    const silentMs = now - this.#heardAt;
    if (silentMs >= this.#staleAfterMs) {
      const expired = [...this.#jobs.values()].filter((job) => now >= job.pushedAt + (job.timeoutMs ?? timeouts.defaultMs) + timeouts.graceMs);
      if (expired.length > 0) {
        void this.#fire(expired, silentMs, timeouts);
        return;
      }
    }
    this.#arm();
  }

  async #fire(expired: readonly WatchedJob[], silentMs: number, timeouts: { readonly defaultMs: number; readonly graceMs: number }): Promise<void> {
    this.#fired = true;
    const { calls, endpointId, workerId, logger, onBlocked } = this.#options;
    const names = expired.map((job) => jobName(job)).join(', ');
    logger.fatal(
      { workerId, requestIds: expired.map((job) => job.id), silentMs: Math.round(silentMs), code: 'SW_EXECUTION_TIMEOUT' },
      `job ${names} blocked the worker process's event loop past its execution timeout plus the ${timeouts.graceMs} ms grace ` +
        `(silent for ${Math.round(silentMs / 100) / 10} s): timed out, and the worker process is replaced; its other jobs go back to the queue`,
    );
    await Promise.all(
      expired.map(async (job) => {
        const timeoutMs = job.timeoutMs ?? timeouts.defaultMs;
        const error: JobErrorPayload = {
          hostname: reportedHostname(),
          worker_id: workerId,
          runtime_version: RUNTIME_VERSION,
          error_type: 'ServerlessWorkerError',
          error_code: 'SW_EXECUTION_TIMEOUT',
          error_message:
            `Job ${jobName(job)} ran past its execution timeout of ${timeoutMs} ms plus the ${timeouts.graceMs} ms grace while its handler ` +
            `blocked the event loop (the worker process was silent for ${Math.round(silentMs)} ms); the --serve-api supervisor timed it out and replaces the worker process`,
        };
        try {
          await calls.done(endpointId, workerId, job.id, JSON.stringify({ error: JSON.stringify(error), stopPod: true }), job.attempt, logger);
        } catch (failure: unknown) {
          logger.error({ err: failure, requestId: job.id, workerId }, 'the timed-out result of a blocked job could not be stored');
        }
      }),
    );
    onBlocked();
  }
}

function jobName(job: WatchedJob): string {
  return job.attempt === undefined ? job.id : `${job.id} (attempt ${job.attempt})`;
}
