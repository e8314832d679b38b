/**
 * @module transports/platform/backoff
 * Exponential backoff with jitter for the transport's polling loops (take, job stop)
 * and an abortable sleep. Jitter spreads a fleet of workers that failed together (a
 * platform restart) so that they do not all come back in the same millisecond.
 */

/** How long to wait after consecutive failures. */
export interface BackoffPolicy {
  /** First wait, ms. */
  readonly minMs: number;
  /** Longest wait, ms. */
  readonly maxMs: number;
  /** Growth per failure; default 2. */
  readonly factor?: number;
}

/** The wait after `failures` consecutive failures (1 = the first): `min * factor^(failures-1)`, capped, then jittered into [half, whole]. */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.max(0, failures - 1);
  const ceiling = Math.min(policy.maxMs, policy.minMs * (policy.factor ?? 2) ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolve after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Statuses worth another try of a post: overload, rate limit, gateway trouble. Another 4xx is final. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}
