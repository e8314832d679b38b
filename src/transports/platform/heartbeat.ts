/**
 * @module transports/platform/heartbeat
 * The heartbeat, `GET <ping>?job_id=<ids>&runpod_version=<v>` every
 * RUNPOD_PING_INTERVAL ms, sent from a worker thread. A handler that blocks the event
 * loop (a synchronous 30 s loop, a native call holding the thread) would otherwise
 * silence the worker, and the platform would take it for dead and hand its job to
 * another worker. The main thread only tells the thread which jobs are in progress
 * (postMessage) and hears back about failed pings. The thread has its own keep-alive
 * connection (an undici Agent cannot cross threads).
 *
 * The jobs in progress change twice per job; telling the thread each time cost a
 * busy worker more CPU than running its jobs (a structured clone and a wake-up of the
 * thread per message). A change is sent at once when none was sent in the last
 * `JOBS_UPDATE_GAP_MS`, else once at the end of that gap with the latest list: a ping
 * may show a list at most that old, against a ping interval of seconds.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { z } from 'zod';
import { HEARTBEAT_THREAD_SOURCE } from './heartbeat-thread-source.js';
import { urlForLog } from './urls.js';

export interface HeartbeatOptions {
  /** The ping URL with the worker id in it, without parameters. */
  readonly url: string;
  readonly apiKey?: string;
  /** Period, ms. */
  readonly intervalMs: number;
  /** Bound of one ping, ms; default the interval, at least 1 000. */
  readonly timeoutMs?: number;
  /** Sent as runpod_version. */
  readonly version: string;
  readonly logger: Logger;
  /** Called once per failed ping (for the heartbeat-failures counter). */
  readonly onFailure?: () => void;
  /** Called instead of the warning when a ping is refused with 401/403 (the transport reports the key once); default: warn. */
  readonly onKeyRefused?: (status: number) => void;
}

const FailureMessageSchema = z.object({
  type: z.literal('failure'),
  consecutive: z.number().int().min(1),
  status: z.number().int().optional(),
  message: z.string(),
});

/** Log the first failure of a run of failures and then every tenth, so an outage does not flood the log. */
const LOG_EVERY = 10;

/** Least time between two job-list updates sent to the thread, ms (at most a tenth of the ping interval). */
export const JOBS_UPDATE_GAP_MS = 50;

export class Heartbeat {
  readonly #options: HeartbeatOptions;
  #thread: Worker | undefined;
  #jobIds: readonly string[] = [];
  #stopped = false;
  /** The thread has not seen the latest #jobIds. */
  #unsent = false;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  #sendTimer: NodeJS.Timeout | undefined;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  /** Start the thread (once); the first ping goes at once. */
  start(): void {
    if (this.#thread || this.#stopped) return;
    const { url, apiKey, intervalMs, version, logger } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? Math.max(1_000, intervalMs);
    const thread = new Worker(HEARTBEAT_THREAD_SOURCE, {
      eval: true,
      workerData: { url, apiKey, intervalMs, timeoutMs, version },
      // The thread needs no loaders or flags of the main process (tsx, inspect).
      execArgv: [],
      name: 'serverless-worker-heartbeat',
    });
    // A heartbeat must never keep a finished worker process alive.
    thread.unref();
    thread.on('message', (message: unknown) => this.#onMessage(message));
    thread.on('error', (error) => logger.error({ err: error }, 'heartbeat thread failed: the platform may take this worker for dead'));
    this.#thread = thread;
    if (this.#jobIds.length > 0) this.#send();
    logger.debug({ url: urlForLog(url), intervalMs }, 'heartbeat started');
  }

  /** The jobs in progress, sent with every ping from now on (within JOBS_UPDATE_GAP_MS). */
  setJobs(jobIds: readonly string[]): void {
    this.#jobIds = [...jobIds];
    this.#unsent = true;
    if (!this.#thread || this.#sendTimer) return;
    const gap = Math.min(JOBS_UPDATE_GAP_MS, this.#options.intervalMs / 10);
    const wait = this.#lastSentAt + gap - performance.now();
    if (wait <= 0) {
      this.#send();
      return;
    }
    this.#sendTimer = setTimeout(() => this.#send(), wait);
    // A pending update must never keep a finished worker process alive either.
    this.#sendTimer.unref();
  }

  /** Stop pinging and end the thread. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#sendTimer);
    this.#sendTimer = undefined;
    const thread = this.#thread;
    this.#thread = undefined;
    if (!thread) return;
    thread.postMessage({ type: 'stop' });
    await thread.terminate().catch(() => 0);
  }

  #send(): void {
    clearTimeout(this.#sendTimer);
    this.#sendTimer = undefined;
    if (!this.#thread || !this.#unsent) return;
    this.#unsent = false;
    this.#lastSentAt = performance.now();
    // postMessage clones the list, so later changes to #jobIds cannot reach the thread unsent.
    this.#thread.postMessage({ type: 'jobs', ids: this.#jobIds });
  }

  #onMessage(message: unknown): void {
    const parsed = FailureMessageSchema.safeParse(message);
    if (!parsed.success) return;
    const { consecutive, status, message: text } = parsed.data;
    this.#options.onFailure?.();
    if (status !== undefined && (status === 401 || status === 403) && this.#options.onKeyRefused) {
      this.#options.onKeyRefused(status);
      return;
    }
    if (consecutive === 1 || consecutive % LOG_EVERY === 0) {
      this.#options.logger.warn(
        { url: urlForLog(this.#options.url), consecutiveFailures: consecutive, ...(status !== undefined ? { status } : {}), error: text },
        'heartbeat ping failed',
      );
    }
  }
}
