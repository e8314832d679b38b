/**
 * @module test/transports/wait-for
 * Bounded waiting for tests: poll a probe until it answers something truthy, or fail
 * naming what was awaited. Every wait in these tests has a bound.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 5_000, intervalMs = 10): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Settle `promise` within `timeoutMs`, or fail naming it. */
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
