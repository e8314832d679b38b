/**
 * @module transports/watchdog/thread-heartbeat
 * The heartbeat inside the watchdog thread: `GET <ping>?job_id=<ids>&runpod_version=<v>`
 * at fixed times (start + n x interval, so that a slow answer does not push the rhythm
 * back), each bounded by its timeout. A blocked main thread cannot silence it. The
 * jobs it lists are the main thread's latest list, unless `claimJobs()` says no (the
 * main thread has been blocked too long, or the watchdog is reporting the jobs itself):
 * then it pings without job_id, so that the platform requeues them instead of waiting
 * on a worker that cannot finish them.
 */
import { appendParams } from '../platform/urls.js';
import type { ThreadHttp } from './thread-http.js';
import type { FromThreadMessage, HeartbeatSettings } from './thread-protocol.js';

export class ThreadHeartbeat {
  readonly #settings: HeartbeatSettings;
  readonly #http: ThreadHttp;
  readonly #report: (message: FromThreadMessage) => void;
  readonly #claimJobs: () => boolean;
  readonly #runningIds: () => string[];
  #jobIds: readonly string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #next = Date.now();
  #consecutive = 0;
  #stopped = false;

  /**
   * `runningIds`: the jobs on the JobBoard. They are listed even before the main
   * thread's (throttled) job list says so: a job that blocks the loop right after it
   * started would otherwise never be listed, and the platform would requeue it.
   */
  constructor(
    settings: HeartbeatSettings,
    http: ThreadHttp,
    report: (message: FromThreadMessage) => void,
    claimJobs: () => boolean,
    runningIds: () => string[] = () => [],
  ) {
    this.#settings = settings;
    this.#http = http;
    this.#report = report;
    this.#claimJobs = claimJobs;
    this.#runningIds = runningIds;
  }

  /** The jobs in progress, as the main thread last told. */
  setJobs(ids: readonly string[]): void {
    this.#jobIds = ids;
  }

  /** The ping URL as it goes now. */
  pingUrl(): string {
    const { url, version } = this.#settings;
    const ids = new Set(this.#jobIds);
    for (const id of this.#runningIds()) ids.add(id);
    const claimed = ids.size > 0 && this.#claimJobs() ? [...ids].join(',') : undefined;
    return appendParams(url, { job_id: claimed, runpod_version: version });
  }

  /** First ping at once, then one every interval. */
  start(): void {
    this.#next = Date.now();
    this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** Send one ping now, outside the rhythm (the watchdog stopped listing the jobs); never rejects. */
  async pingNow(): Promise<void> {
    await this.#ping();
  }

  async #ping(): Promise<void> {
    const outcome = await this.#http.call('GET', this.pingUrl(), this.#settings.timeoutMs);
    if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) {
      this.#consecutive = 0;
      return;
    }
    this.#consecutive++;
    this.#report({
      type: 'failure',
      consecutive: this.#consecutive,
      ...('status' in outcome ? { status: outcome.status, message: `HTTP ${outcome.status}` } : { message: outcome.error }),
    });
  }

  #tick(): void {
    if (this.#stopped) return;
    void this.#ping();
    this.#next += this.#settings.intervalMs;
    const now = Date.now();
    // Fell behind (the machine was suspended): start the rhythm again from now, no burst.
    if (this.#next <= now) this.#next = now + this.#settings.intervalMs;
    this.#timer = setTimeout(() => this.#tick(), this.#next - now);
  }
}
