/**
 * @module harness/load-balancing/lb-pool
 * The workers of one load-balancing endpoint and the state the harness's pings gave
 * each: `unknown` (registered, not pinged yet), `initializing` (/ping 204), `healthy`
 * (/ping 200), `unhealthy` (anything else, no answer, or a request that could not reach
 * it). Requests go round-robin to healthy workers with room (in flight < concurrency).
 * Cold start is measured as the platform does: from the first 204 to the first 200.
 */
import { redactUrlCredentials } from './redact-url.js';

export type LbWorkerState = 'unknown' | 'initializing' | 'healthy' | 'unhealthy';

export interface LbWorker {
  readonly id: string;
  /** Base URL of the worker's app (`http://host:PORT`). */
  readonly url: string;
  /** Base URL of its health server (`http://host:PORT_HEALTH`); /ping is asked there. */
  readonly healthUrl: string;
  /** Requests at once the harness sends it. */
  readonly concurrency: number;
  state: LbWorkerState;
  inFlight: number;
  registeredAt: number;
  /** When the state last changed, epoch ms. */
  since: number;
  firstInitializingAt?: number;
  coldStartMs?: number;
  /** Why it is unhealthy (the ping's status or error). */
  lastError?: string;
  requests: number;
}

export interface LbWorkerView {
  readonly id: string;
  readonly url: string;
  readonly healthUrl: string;
  readonly state: LbWorkerState;
  readonly inFlight: number;
  readonly concurrency: number;
  readonly requests: number;
  readonly coldStartMs?: number;
  readonly lastError?: string;
}

export interface LbCounts {
  /** Healthy with no request in flight. */
  idle: number;
  /** Healthy with requests in flight. */
  running: number;
  /** /ping answered 204, or not pinged yet. */
  initializing: number;
  unhealthy: number;
}

export class LbPool {
  readonly endpointId: string;
  readonly #workers = new Map<string, LbWorker>();
  #next = 0;

  constructor(endpointId: string) {
    this.endpointId = endpointId;
  }

  /** Add (or replace) a worker; it is routed to once a ping answers 200. */
  register(worker: Pick<LbWorker, 'id' | 'url' | 'healthUrl' | 'concurrency'>, now: number): LbWorker {
    const entry: LbWorker = { ...worker, state: 'unknown', inFlight: 0, registeredAt: now, since: now, requests: 0 };
    this.#workers.set(worker.id, entry);
    return entry;
  }

  remove(workerId: string): boolean {
    return this.#workers.delete(workerId);
  }

  get(workerId: string): LbWorker | undefined {
    return this.#workers.get(workerId);
  }

  all(): LbWorker[] {
    return [...this.#workers.values()];
  }

  get size(): number {
    return this.#workers.size;
  }

  /** Record what a ping (or a failed request) said; answers whether the state changed. */
  setState(worker: LbWorker, state: LbWorkerState, now: number, error?: string): boolean {
    if (state === 'initializing' && worker.firstInitializingAt === undefined) worker.firstInitializingAt = now;
    if (state === 'healthy' && worker.coldStartMs === undefined && worker.firstInitializingAt !== undefined) {
      worker.coldStartMs = now - worker.firstInitializingAt;
    }
    if (state === 'unhealthy') worker.lastError = error;
    else delete worker.lastError;
    if (worker.state === state) return false;
    worker.state = state;
    worker.since = now;
    return true;
  }

  /** The next healthy worker with room, round-robin; undefined when none has. */
  pick(): LbWorker | undefined {
    const workers = [...this.#workers.values()];
    for (let i = 0; i < workers.length; i++) {
      const index = (this.#next + i) % workers.length;
      const worker = workers[index];
      if (worker && worker.state === 'healthy' && worker.inFlight < worker.concurrency) {
        this.#next = index + 1;
        return worker;
      }
    }
    return undefined;
  }

  counts(): LbCounts {
    const counts: LbCounts = { idle: 0, running: 0, initializing: 0, unhealthy: 0 };
    for (const worker of this.#workers.values()) {
      if (worker.state === 'healthy') {
        if (worker.inFlight > 0) counts.running++;
        else counts.idle++;
      } else if (worker.state === 'unhealthy') counts.unhealthy++;
      else counts.initializing++;
    }
    return counts;
  }

  /** Why no worker could take a request, for the 400's message. */
  describe(): string {
    if (this.#workers.size === 0) return 'no worker is registered';
    const c = this.counts();
    const healthy = c.idle + c.running;
    const others = `${c.initializing} initializing, ${c.unhealthy} unhealthy`;
    return healthy === 0 ? `no healthy worker: ${others}` : `${healthy} healthy, all at their concurrency; ${others}`;
  }

  view(worker: LbWorker): LbWorkerView {
    return {
      id: worker.id,
      // Credentials in a registered URL are never shown (redact-url.ts).
      url: redactUrlCredentials(worker.url),
      healthUrl: redactUrlCredentials(worker.healthUrl),
      state: worker.state,
      inFlight: worker.inFlight,
      concurrency: worker.concurrency,
      requests: worker.requests,
      ...(worker.coldStartMs !== undefined ? { coldStartMs: worker.coldStartMs } : {}),
      ...(worker.lastError !== undefined ? { lastError: worker.lastError } : {}),
    };
  }
}
