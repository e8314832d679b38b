/**
 * @module harness/http/store-outage
 * A job store outage as the log tells it (issue 32 item 7). The first request that meets
 * the store unavailable (503 SW_STORE_UNAVAILABLE) warns what is down, and again at most
 * every STORE_WARNING_EVERY_MS while it stays down (an outage under load must not flood
 * the log). From that first request on, the store is probed every PROBE_EVERY_MS (a cheap
 * read); the first probe that succeeds logs, once, that the store is back, how long it
 * was down (from the first refused request to that probe) and how many requests were
 * refused meanwhile. The next outage warns at once again.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { type Clock, type ServerlessWorkerError, systemClock, type TimerHandle } from 'serverless-worker/internal';
import { databaseUnavailable } from '../postgres/unavailable.js';

/** Least time between two "job store unavailable" warnings of one outage, ms. */
export const STORE_WARNING_EVERY_MS = 5_000;
/** How often the store is probed while it is down, ms. */
export const PROBE_EVERY_MS = 1_000;

export class StoreOutage {
  readonly #probe: (() => Promise<unknown>) | undefined;
  readonly #logger: Pick<FastifyBaseLogger, 'info'> | undefined;
  readonly #clock: Clock;
  #downSince: number | undefined;
  #lastWarning = Number.NEGATIVE_INFINITY;
  #refused = 0;
  #probing: TimerHandle | undefined;
  #closed = false;

  /**
   * `probe`: a read that needs the store (it rejects while the store is down); `logger`
   * takes the "back" line. Without them the warnings are throttled, and no "back" line is
   * logged (nothing tells when the store returns).
   */
  constructor(probe?: () => Promise<unknown>, logger?: Pick<FastifyBaseLogger, 'info'>, clock: Clock = systemClock) {
    this.#probe = probe;
    this.#logger = logger;
    this.#clock = clock;
  }

  /** Whether a request has met the store unavailable and no probe has found it back yet. */
  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** `request` is answered `coded` (SW_STORE_UNAVAILABLE, caused by `coded.cause`): warn, and watch for the store's return. */
  unavailable(request: FastifyRequest, coded: ServerlessWorkerError, retryAfterSeconds: number): void {
    const now = this.#clock.now();
    this.#refused++;
    if (this.#downSince === undefined) {
      this.#downSince = now;
      this.#scheduleProbe();
    }
    if (now - this.#lastWarning < STORE_WARNING_EVERY_MS) return;
    this.#lastWarning = now;
    request.log.warn(
      { err: coded.cause, route: request.routeOptions.url, retryAfterSeconds },
      `job store unavailable: ${databaseUnavailable(coded.cause) ?? 'PostgreSQL cannot be reached'}; requests that need it answer 503 SW_STORE_UNAVAILABLE until it is back`,
    );
  }

  /** Stop probing (the server closes). */
  close(): void {
    this.#closed = true;
    this.#probing?.cancel();
  }

  #scheduleProbe(): void {
    if (this.#closed || this.#probe === undefined) return;
    this.#probing = this.#clock.setTimer(PROBE_EVERY_MS, () => void this.#runProbe());
  }

  async #runProbe(): Promise<void> {
    try {
      await this.#probe?.();
    } catch {
      this.#scheduleProbe();
      return;
    }
    const since = this.#downSince;
    if (since === undefined || this.#closed) return;
    const downMs = this.#clock.now() - since;
    const refused = this.#refused;
    this.#downSince = undefined;
    this.#refused = 0;
    this.#lastWarning = Number.NEGATIVE_INFINITY;
    this.#logger?.info(
      { downMs, refused },
      `job store back: PostgreSQL answers again after about ${(downMs / 1000).toFixed(1)} s down; ${refused} request(s) were answered 503 SW_STORE_UNAVAILABLE meanwhile`,
    );
  }
}
