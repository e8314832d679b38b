/**
 * @module harness/http/rate-limit/limits
 * The rate limits of spec section 8.2, per endpoint and operation, named once: requests
 * per 10 s window and concurrent requests. `/status-sync` counts as `/status`; `/retry`
 * and `/health` have no limit in the spec and get none here.
 */

/** Operations that carry a rate limit (spec 8.2). */
export const RATE_LIMITED_OPERATIONS = ['runsync', 'run', 'status', 'stream', 'cancel', 'purge-queue', 'openai', 'requests'] as const;
export type RateLimitedOperation = (typeof RATE_LIMITED_OPERATIONS)[number];

export interface OperationLimit {
  /** Requests accepted per window. */
  readonly perWindow: number;
  /** Requests in flight at once; null: no concurrency limit. */
  readonly concurrent: number | null;
}

/** The window the spec counts requests in: 10 s. */
export const RATE_WINDOW_MS = 10_000;

/**
 * requests_per_worker: the spec does not give the platform's value. 100 per window is
 * our default; it only matters once `running workers x 100` passes the base limit.
 */
export const DEFAULT_REQUESTS_PER_WORKER = 100;

/** Spec 8.2, per endpoint and operation. */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitedOperation, OperationLimit>> = Object.freeze({
  runsync: { perWindow: 2000, concurrent: 400 },
  run: { perWindow: 1000, concurrent: 200 },
  status: { perWindow: 2000, concurrent: 400 },
  stream: { perWindow: 2000, concurrent: 400 },
  cancel: { perWindow: 100, concurrent: 20 },
  'purge-queue': { perWindow: 2, concurrent: null },
  openai: { perWindow: 2000, concurrent: 400 },
  requests: { perWindow: 10, concurrent: 2 },
});

/**
 * The limit in force with `workers` running: the larger of the base rate and
 * `workers x requestsPerWorker`; the concurrency limit grows in the same proportion.
 */
export function effectiveLimit(base: OperationLimit, workers: number, requestsPerWorker: number): OperationLimit {
  const perWindow = Math.max(base.perWindow, Math.max(0, workers) * requestsPerWorker);
  if (base.concurrent === null) return { perWindow, concurrent: null };
  const concurrent = Math.max(base.concurrent, Math.ceil((base.concurrent * perWindow) / base.perWindow));
  return { perWindow, concurrent };
}
