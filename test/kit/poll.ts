/**
 * @module test/kit/poll
 * Bounded waiting for tests: poll a condition until it holds, settle a promise within a
 * bound, or retry an assertion. Every wait has a bound, and a timeout says what was awaited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { vi } from 'vitest';

/**
 * Poll `probe` every `intervalMs` (default 10) until it answers something truthy, and
 * answer that; after `timeoutMs` (default 5 000) fail naming `what`.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 5_000, intervalMs = 10): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Settle `promise` within `timeoutMs` (default 5 000), or fail naming `what`. */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Retry the assertion `check` until it passes (events from another process arrive a
 * little later); after `timeoutMs` (default 10 000) its last failure is the test's.
 */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  await vi.waitFor(check, { timeout: timeoutMs, interval: intervalMs });
}
