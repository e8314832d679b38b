/**
 * @module load-balancing/request-gate
 * The requests a load-balancing worker's app is handling: counted (and measured) as
 * they start and end, so that a graceful shutdown can wait for them, and refused
 * cleanly (503, JSON, `Connection: close`) when the app is not ready or drains.
 */
import type { ServerResponse } from 'node:http';
import { systemClock, type Clock } from '../clock/index.js';
import { ServerlessWorkerError } from '../job/index.js';
import type { Metrics } from '../metrics/index.js';

export class RequestGate {
  readonly #metrics: Metrics | undefined;
  readonly #clock: Clock;
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(metrics?: Metrics, clock: Clock = systemClock) {
    this.#metrics = metrics;
    this.#clock = clock;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Count the request answered on `response` until its connection closes or it ends. */
  track(response: ServerResponse): void {
    this.#inFlight++;
    this.#metrics?.httpRequestsInFlight.inc();
    response.once('close', () => {
      this.#inFlight--;
      this.#metrics?.httpRequestsInFlight.dec();
      this.#metrics?.httpRequestsTotal.inc({ code: String(response.statusCode) });
      if (this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    });
  }

  /** Answer 503 with the error, closing the connection. */
  refuse(response: ServerResponse, error: ServerlessWorkerError): void {
    const body = JSON.stringify(error.toJSON());
    response.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
    this.#metrics?.httpRequestsTotal.inc({ code: String(error.status) });
  }

  /** True once no request is in flight; false when `timeoutMs` passed first. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.#clock.setTimer(timeoutMs, () => resolve(false), { keepAlive: true });
      this.#idleWaiters.push(() => {
        timer.cancel();
        resolve(true);
      });
    });
  }
}
