/**
 * @module transports/platform/heartbeat
 * The heartbeat, `GET <ping>?job_id=<ids>&runpod_version=<v>` every
 * RUNPOD_PING_INTERVAL ms, sent from a worker thread. A handler that blocks the event
 * loop (a synchronous 30 s loop, a native call holding the thread) would otherwise
 * silence the worker, and the platform would take it for dead and hand its job to
 * another worker. The main thread only tells the thread which jobs are in progress
 * (postMessage) and hears back about failed pings. The thread has its own keep-alive
 * connection (an undici Agent cannot cross threads).
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
}

const FailureMessageSchema = z.object({
  type: z.literal('failure'),
  consecutive: z.number().int().min(1),
  status: z.number().int().optional(),
  message: z.string(),
});

/** Log the first failure of a run of failures and then every tenth, so an outage does not flood the log. */
const LOG_EVERY = 10;

export class Heartbeat {
  readonly #options: HeartbeatOptions;
  #thread: Worker | undefined;
  #jobIds: readonly string[] = [];
  #stopped = false;

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
    if (this.#jobIds.length > 0) thread.postMessage({ type: 'jobs', ids: [...this.#jobIds] });
    logger.debug({ url: urlForLog(url), intervalMs }, 'heartbeat started');
  }

  /** The jobs in progress, sent with every ping from now on. */
  setJobs(jobIds: readonly string[]): void {
    this.#jobIds = [...jobIds];
    this.#thread?.postMessage({ type: 'jobs', ids: [...jobIds] });
  }

  /** Stop pinging and end the thread. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const thread = this.#thread;
    this.#thread = undefined;
    if (!thread) return;
    thread.postMessage({ type: 'stop' });
    await thread.terminate().catch(() => 0);
  }

  #onMessage(message: unknown): void {
    const parsed = FailureMessageSchema.safeParse(message);
    if (!parsed.success) return;
    const { consecutive, status, message: text } = parsed.data;
    this.#options.onFailure?.();
    if (consecutive === 1 || consecutive % LOG_EVERY === 0) {
      this.#options.logger.warn(
        { url: urlForLog(this.#options.url), consecutiveFailures: consecutive, ...(status !== undefined ? { status } : {}), error: text },
        'heartbeat ping failed',
      );
    }
  }
}
