/**
 * @module clock/backoff
 * Exponential backoff with jitter for polling and retry loops (the transports' take and
 * job stop, announce, the watchdog's posts). Jitter spreads a fleet of workers that failed
 * together (a platform restart) so that they do not all come back in the same millisecond.
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
