/**
 * @module harness/http/rate-limit/rate-limiter
 * A sliding-window rate limiter with a concurrency cap, one bucket per key (endpoint and
 * operation). A sliding log of accept times, not a fixed window: a fixed window lets
 * twice the limit through around a window edge, and the log is small (at most the
 * limit's entries per key). Pure: time comes from `now`, so tests need no waiting.
 */
import { systemClock } from 'serverless-worker/internal';
import type { OperationLimit } from './limits.js';

/** What `acquire` answers. */
export type RateDecision =
  | { readonly allowed: true; readonly release: () => void }
  | {
      readonly allowed: false;
      /** Which limit refused: requests per window, or requests in flight. */
      readonly reason: 'rate' | 'concurrency';
      /** How long until a request would be accepted (concurrency: an estimate), ms, at least 1. */
      readonly retryAfterMs: number;
      readonly limit: OperationLimit;
    };

interface Bucket {
  /** Accept times, oldest first, from index `head` on. */
  times: number[];
  head: number;
  inFlight: number;
}

export interface RateLimiterOptions {
  /** Window length, ms; default 10 000 (spec 8.2). */
  windowMs?: number;
  /** Time source, epoch ms; default the system clock. */
  now?: () => number;
}

/** A request refused for concurrency is told to come back after this long. */
const CONCURRENCY_RETRY_MS = 1_000;
/** Sweep idle buckets once the table holds this many keys. */
const SWEEP_AT_KEYS = 10_000;

export class RateLimiter {
  readonly windowMs: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimiterOptions = {}) {
    this.windowMs = options.windowMs ?? 10_000;
    this.#now = options.now ?? (() => systemClock.now());
  }

  /** Count one request for `key` under `limit`, or refuse it. Call `release` when the request is done. */
  acquire(key: string, limit: OperationLimit): RateDecision {
    const now = this.#now();
    const bucket = this.#bucket(key);
    this.#prune(bucket, now);
    const count = bucket.times.length - bucket.head;
    if (count >= limit.perWindow) {
      const oldest = bucket.times[bucket.head] ?? now;
      return { allowed: false, reason: 'rate', retryAfterMs: Math.max(1, oldest + this.windowMs - now), limit };
    }
    if (limit.concurrent !== null && bucket.inFlight >= limit.concurrent) {
      return { allowed: false, reason: 'concurrency', retryAfterMs: CONCURRENCY_RETRY_MS, limit };
    }
    bucket.times.push(now);
    bucket.inFlight++;
    let released = false;
    return {
      allowed: true,
      release: () => {
        if (released) return;
        released = true;
        bucket.inFlight--;
        if (bucket.inFlight === 0 && bucket.times.length === bucket.head) this.#buckets.delete(key);
      },
    };
  }

  /** Requests in flight for `key` (for tests and diagnostics). */
  inFlight(key: string): number {
    return this.#buckets.get(key)?.inFlight ?? 0;
  }

  /** Keys with state (for tests: idle keys are dropped). */
  get size(): number {
    return this.#buckets.size;
  }

  #bucket(key: string): Bucket {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= SWEEP_AT_KEYS) this.#sweep();
      bucket = { times: [], head: 0, inFlight: 0 };
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }

  #prune(bucket: Bucket, now: number): void {
    const cutoff = now - this.windowMs;
    while (bucket.head < bucket.times.length && (bucket.times[bucket.head] ?? now) <= cutoff) bucket.head++;
    // Compact now and then instead of shifting on every request.
    if (bucket.head > 64 && bucket.head * 2 > bucket.times.length) {
      bucket.times = bucket.times.slice(bucket.head);
      bucket.head = 0;
    }
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, bucket] of this.#buckets) {
      this.#prune(bucket, now);
      if (bucket.inFlight === 0 && bucket.times.length === bucket.head) this.#buckets.delete(key);
    }
  }
}
